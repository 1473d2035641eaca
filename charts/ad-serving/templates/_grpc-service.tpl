{{/*
Deployment, headless Service and HPA of one gRPC service.
The services differ only in name, entry point and values section, so each component file
(accounts.yaml, inventory.yaml, ...) renders this with (dict "ctx" $ "component" "<name>").
*/}}
{{- define "ad-serving.grpcService" -}}
{{- $ctx := .ctx }}
{{- $component := .component }}
{{- $values := index $ctx.Values $component }}
{{- $global := $ctx.Values.global }}
{{- $name := include "ad-serving.componentName" . }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $name }}
  labels:
    {{- include "ad-serving.labels" . | nindent 4 }}
spec:
  {{- if not $values.autoscaling.enabled }}
  replicas: {{ $values.replicaCount }}
  {{- end }}
  revisionHistoryLimit: 5
  selector:
    matchLabels:
      {{- include "ad-serving.selectorLabels" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "ad-serving.labels" . | nindent 8 }}
        {{- with $values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- $annotations := merge (include "ad-serving.checksumAnnotations" $ctx | fromYaml) $values.podAnnotations }}
      {{- with $annotations }}
      annotations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    spec:
      serviceAccountName: {{ include "ad-serving.componentServiceAccountName" . }}
      automountServiceAccountToken: false
      {{- with $global.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- toYaml $global.podSecurityContext | nindent 8 }}
      terminationGracePeriodSeconds: {{ $global.terminationGracePeriodSeconds }}
      {{- with (include "ad-serving.podExtras" . | trim) }}
      {{- . | nindent 6 }}
      {{- end }}
      {{- with (include "ad-serving.scheduling" . | trim) }}
      {{- . | nindent 6 }}
      {{- end }}
      containers:
        - name: {{ $component }}
          image: {{ include "ad-serving.image" $ctx }}
          imagePullPolicy: {{ $global.image.pullPolicy }}
          command: ["node", "dist/services/{{ $component }}/main.js"]
          ports:
            - name: grpc
              containerPort: {{ $global.grpcPort }}
              protocol: TCP
            - name: metrics
              containerPort: {{ $global.metricsPort }}
              protocol: TCP
          env:
            - name: GRPC_PORT
              value: {{ $global.grpcPort | quote }}
            {{- with (include "ad-serving.databaseEnv" $ctx | trim) }}
            {{- . | nindent 12 }}
            {{- end }}
            {{- with (include "ad-serving.commonEnv" . | trim) }}
            {{- . | nindent 12 }}
            {{- end }}
            {{- with $values.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          # grpc.health.v1 on the gRPC port (values: <component>.probes).
          {{- with $values.probes.startup }}
          startupProbe:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          {{- with $values.probes.readiness }}
          readinessProbe:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          {{- with $values.probes.liveness }}
          livenessProbe:
            {{- toYaml . | nindent 12 }}
          {{- end }}
          {{- with (include "ad-serving.lifecycle" $ctx | trim) }}
          {{- . | nindent 10 }}
          {{- end }}
          resources:
            {{- toYaml $values.resources | nindent 12 }}
          securityContext:
            {{- toYaml $global.securityContext | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
            - name: data
              mountPath: /data
            {{- with $values.extraVolumeMounts }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
        {{- with $values.sidecars }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      volumes:
        - name: tmp
          emptyDir: {}
        - name: data
          emptyDir: {}
        {{- with $values.extraVolumes }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ $name }}
  labels:
    {{- include "ad-serving.labels" . | nindent 4 }}
  {{- with $values.service.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  # Headless: the name resolves to every ready pod, and the clients balance calls across them.
  type: ClusterIP
  clusterIP: None
  selector:
    {{- include "ad-serving.selectorLabels" . | nindent 4 }}
  ports:
    - name: grpc
      port: {{ $global.grpcPort }}
      targetPort: grpc
      protocol: TCP
      appProtocol: grpc
    - name: metrics
      port: {{ $global.metricsPort }}
      targetPort: metrics
      protocol: TCP
{{- include "ad-serving.hpa" . }}
{{- end }}
