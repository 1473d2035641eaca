{{/*
HorizontalPodAutoscaler of a component with `autoscaling.enabled`: (dict "ctx" $ "component" "accounts").
Rendered after a "---" by the component's template. `behavior` scales up quickly and down slowly, so
that a short dip does not drop pods that the next burst needs again.
*/}}
{{- define "ad-serving.hpa" -}}
{{- $autoscaling := (index .ctx.Values .component).autoscaling }}
{{- if $autoscaling.enabled }}
{{- $name := include "ad-serving.componentName" . }}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ $name }}
  labels:
    {{- include "ad-serving.labels" . | nindent 4 }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ $name }}
  minReplicas: {{ $autoscaling.minReplicas }}
  maxReplicas: {{ $autoscaling.maxReplicas }}
  metrics:
    {{- with $autoscaling.targetCPUUtilizationPercentage }}
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: {{ . }}
    {{- end }}
    {{- with $autoscaling.targetMemoryUtilizationPercentage }}
    - type: Resource
      resource:
        name: memory
        target:
          type: Utilization
          averageUtilization: {{ . }}
    {{- end }}
  {{- with $autoscaling.behavior }}
  behavior:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
{{- end }}
