{{/*
Shared names, labels and environment of the ad-serving chart.
Component templates call these with either the root context or
(dict "ctx" $ "component" "<name>").
*/}}

{{/* The gRPC services, in the order the chart renders them. */}}
{{- define "ad-serving.grpcServices" -}}
accounts inventory selfserve reporting
{{- end }}

{{/* Every component (gateway first); serving is the public ad-serving path (HTTP). */}}
{{- define "ad-serving.components" -}}
gateway {{ include "ad-serving.grpcServices" . }} serving
{{- end }}

{{- define "ad-serving.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Release-wide prefix; components are named "<fullname>-<component>". The prefix is cut to 47
characters BEFORE the suffix is added, so that the longest derived name
("-gateway-metrics", 16) still fits in 63 and no two components can end up with the same truncated name.
*/}}
{{- define "ad-serving.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 47 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 47 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 47 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "ad-serving.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Name of a component's Deployment and Service: (dict "ctx" $ "component" "accounts") */}}
{{- define "ad-serving.componentName" -}}
{{- printf "%s-%s" (include "ad-serving.fullname" .ctx) .component }}
{{- end }}

{{/* Labels on every object of the release. */}}
{{- define "ad-serving.commonLabels" -}}
helm.sh/chart: {{ include "ad-serving.chart" . }}
app.kubernetes.io/part-of: {{ include "ad-serving.name" . }}
app.kubernetes.io/version: {{ .Values.global.image.tag | default .Chart.AppVersion | trunc 63 | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Selector labels of a component: (dict "ctx" $ "component" "accounts") */}}
{{- define "ad-serving.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ad-serving.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* All labels of a component's objects: (dict "ctx" $ "component" "accounts") */}}
{{- define "ad-serving.labels" -}}
{{ include "ad-serving.commonLabels" .ctx }}
{{ include "ad-serving.selectorLabels" . }}
{{- end }}

{{/* Release-wide selector (every component). */}}
{{- define "ad-serving.releaseSelectorLabels" -}}
app.kubernetes.io/name: {{ include "ad-serving.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Service account of a component: its own serviceAccountName, else the release's. (dict "ctx" $ "component" "accounts") */}}
{{- define "ad-serving.componentServiceAccountName" -}}
{{- (index .ctx.Values .component).serviceAccountName | default (include "ad-serving.serviceAccountName" .ctx) }}
{{- end }}

{{- define "ad-serving.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "ad-serving.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "ad-serving.image" -}}
{{- $image := .Values.global.image }}
{{- if $image.digest }}
{{- printf "%s@%s" $image.repository $image.digest }}
{{- else }}
{{- printf "%s:%s" $image.repository (toString ($image.tag | default .Chart.AppVersion)) }}
{{- end }}
{{- end }}

{{/* Secret created by the chart for DATABASE_URL / REDIS_URL given as plain values, the bundled PostgreSQL's password, and INTERNAL_TOKEN. */}}
{{- define "ad-serving.secretName" -}}
{{- printf "%s-env" (include "ad-serving.fullname" .) }}
{{- end }}

{{- define "ad-serving.bundledDatabase" -}}
{{- if eq .Values.global.database.mode "bundled" }}true{{ end }}
{{- end }}

{{/*
Name of the bundled PostgreSQL's StatefulSet and headless Service. "-db", not "-postgres": a
StatefulSet's name must stay within 52 characters (its pods carry a controller-revision-hash label
of name + hash), and the release prefix may take 47.
*/}}
{{- define "ad-serving.postgresName" -}}
{{- printf "%s-db" (include "ad-serving.fullname" .) }}
{{- end }}

{{/* Host of the bundled PostgreSQL (its pod, through the headless Service). */}}
{{- define "ad-serving.postgresHost" -}}
{{- printf "%s.%s.svc.%s" (include "ad-serving.postgresName" .) .Release.Namespace .Values.global.clusterDomain }}
{{- end }}

{{/* Image of the bundled PostgreSQL. */}}
{{- define "ad-serving.postgresImage" -}}
{{- $image := .Values.global.database.bundled.image }}
{{- printf "%s:%s" $image.repository (toString $image.tag) }}
{{- end }}

{{/* True when the chart must create its Secret. */}}
{{- define "ad-serving.createSecret" -}}
{{- $db := .Values.global.database }}
{{- $redis := .Values.global.redis }}
{{- if or (eq $db.mode "bundled") (and (eq $db.mode "external") (not $db.existingSecret) $db.url) (and (not $redis.existingSecret) $redis.url) (not .Values.global.internalToken.existingSecret) (and .Values.serving.enabled (not .Values.global.servingSecret.existingSecret)) }}true{{ end }}
{{- end }}

{{/*
Checks the values once; included by every component template so that any render fails early.
*/}}
{{- define "ad-serving.validate" -}}
{{- $db := .Values.global.database }}
{{- if not (has $db.mode (list "external" "bundled")) }}
{{- fail (printf "global.database.mode must be \"external\" or \"bundled\", not %q" $db.mode) }}
{{- end }}
{{- if and (eq $db.mode "external") (not $db.existingSecret) (not $db.url) }}
{{- fail "global.database.mode=external needs global.database.url or global.database.existingSecret" }}
{{- end }}
{{- $redis := .Values.global.redis }}
{{- if and .Values.serving.enabled (or (gt (int .Values.serving.replicaCount) 1) .Values.serving.autoscaling.enabled) (not $redis.url) (not $redis.existingSecret) }}
{{- fail "more than one serving replica needs global.redis (url or existingSecret): quotas and day caps are shared between serving replicas only through Redis" }}
{{- end }}
{{- if and (include "ad-serving.migrationsJob" .) (not .Values.migrations.existingSecret) (not .Values.migrations.url) }}
{{- fail "migrations.enabled needs migrations.existingSecret or migrations.url (a user allowed to run DDL); or set migrations.enabled=false to let the services migrate themselves" }}
{{- end }}
{{- end }}

{{/* SERVE_BASE_URL: explicit, else the first ingress host over https. */}}
{{- define "ad-serving.serveBaseUrl" -}}
{{- if .Values.global.serveBaseUrl }}
{{- .Values.global.serveBaseUrl }}
{{- else if and .Values.gateway.ingress.enabled .Values.gateway.ingress.hosts }}
{{- printf "https://%s" (first .Values.gateway.ingress.hosts).host }}
{{- end }}
{{- end }}

{{/*
Peer addresses: every process reaches every service through its headless Service. A dns:/// target
resolves to every ready pod and the clients balance calls across them (round_robin); servers close
connections after GRPC_MAX_CONNECTION_AGE_MS, so clients re-resolve and find new pods.
*/}}
{{- define "ad-serving.peerEnv" -}}
{{- $ctx := . }}
{{- range $service := splitList " " (include "ad-serving.grpcServices" .) }}
- name: {{ printf "%s_ADDR" (upper $service) }}
  value: {{ printf "dns:///%s.%s.svc.%s:%v" (include "ad-serving.componentName" (dict "ctx" $ctx "component" $service)) $ctx.Release.Namespace $ctx.Values.global.clusterDomain $ctx.Values.global.grpcPort | quote }}
{{- end }}
{{- end }}

{{/* "true" when the services only check their schema (the migrations Job applies it). */}}
{{- define "ad-serving.migrationsJob" -}}
{{- if and (eq .Values.global.database.mode "external") .Values.migrations.enabled }}true{{ end }}
{{- end }}

{{/*
Environment shared by every component: (dict "ctx" $ "component" "accounts")
*/}}
{{- define "ad-serving.commonEnv" -}}
{{- $ctx := .ctx }}
{{- $global := $ctx.Values.global }}
- name: LOG_LEVEL
  value: {{ $global.logLevel | quote }}
- name: METRICS_PORT
  value: {{ $global.metricsPort | quote }}
- name: DATA_DIR
  value: /data
# Services bind loopback by default (npm start on one host); in a pod every interface.
- name: BIND_HOST
  value: "0.0.0.0"
- name: DB_MIGRATE
  value: {{ ternary "false" "true" (eq (include "ad-serving.migrationsJob" $ctx) "true") | quote }}
- name: GRPC_MAX_CONNECTION_AGE_MS
  value: {{ $global.grpcMaxConnectionAgeMs | quote }}
{{- include "ad-serving.peerEnv" $ctx }}
- name: INTERNAL_TOKEN
  valueFrom:
    secretKeyRef:
      {{- if $global.internalToken.existingSecret }}
      name: {{ $global.internalToken.existingSecret }}
      key: {{ $global.internalToken.existingSecretKey }}
      {{- else }}
      name: {{ include "ad-serving.secretName" $ctx }}
      key: INTERNAL_TOKEN
      {{- end }}
{{- if $global.redis.existingSecret }}
- name: REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ $global.redis.existingSecret }}
      key: {{ $global.redis.existingSecretKey }}
{{- else if $global.redis.url }}
- name: REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "ad-serving.secretName" $ctx }}
      key: REDIS_URL
{{- end }}
{{- if $global.otel.endpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ $global.otel.endpoint | quote }}
- name: K8S_POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: K8S_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: OTEL_RESOURCE_ATTRIBUTES
  value: {{ printf "k8s.namespace.name=$(K8S_NAMESPACE),k8s.pod.name=$(K8S_POD_NAME),k8s.deployment.name=%s" (include "ad-serving.componentName" .) | quote }}
{{- end }}
{{- with $global.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* DATABASE_URL of a gRPC service: the external server's, or the bundled PostgreSQL's (chart Secret). */}}
{{- define "ad-serving.databaseEnv" -}}
{{- $db := .Values.global.database }}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      {{- if and (eq $db.mode "external") $db.existingSecret }}
      name: {{ $db.existingSecret }}
      key: {{ $db.existingSecretKey }}
      {{- else }}
      name: {{ include "ad-serving.secretName" . }}
      key: DATABASE_URL
      {{- end }}
{{- end }}

{{/*
Pod annotations that roll the pods when the chart's Secret changes. The checksum covers the values
that go into the Secret, never the rendered Secret: a generated token differs at every include (and,
under `helm template` or Argo CD, at every render), which would restart every pod on every sync.
*/}}
{{- define "ad-serving.checksumAnnotations" -}}
{{- if include "ad-serving.createSecret" . }}
{{- $g := .Values.global }}
checksum/secret: {{ list $g.database.mode $g.database.bundled.database $g.database.url $g.redis.url $g.internalToken $g.servingSecret | toJson | sha256sum }}
{{- end }}
{{- end }}

{{/* Pod-level extras of a component: priority class and init containers. (dict "ctx" $ "component" "accounts") */}}
{{- define "ad-serving.podExtras" -}}
{{- $ctx := .ctx }}
{{- $values := index $ctx.Values .component }}
{{- with $values.priorityClassName }}
priorityClassName: {{ . | quote }}
{{- end }}
{{- $wait := and (include "ad-serving.bundledDatabase" $ctx) (has .component (splitList " " (include "ad-serving.grpcServices" $ctx))) }}
{{- if or $wait $values.initContainers }}
initContainers:
  {{- if $wait }}
  # The service migrates its schema at start: wait until the bundled PostgreSQL accepts connections.
  - name: wait-for-postgres
    image: {{ include "ad-serving.postgresImage" $ctx }}
    imagePullPolicy: {{ $ctx.Values.global.database.bundled.image.pullPolicy }}
    command: ["sh", "-c", "until pg_isready -q -h \"$PGHOST\" -p 5432; do echo waiting for $PGHOST; sleep 2; done"]
    env:
      - name: PGHOST
        value: {{ include "ad-serving.postgresHost" $ctx | quote }}
    resources:
      requests:
        cpu: 10m
        memory: 16Mi
      limits:
        memory: 64Mi
    securityContext:
      {{- toYaml $ctx.Values.global.securityContext | nindent 6 }}
  {{- end }}
  {{- with $values.initContainers }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end }}
{{- end }}

{{/* preStop pause, so that endpoints are gone before the process starts draining. */}}
{{- define "ad-serving.lifecycle" -}}
{{- if .Values.global.preStopSleepSeconds }}
lifecycle:
  preStop:
    exec:
      command: ["sleep", "{{ .Values.global.preStopSleepSeconds }}"]
{{- end }}
{{- end }}

{{/*
Pod scheduling settings from a component's values section: (dict "ctx" $ "component" "accounts")
A topology spread constraint without labelSelector spreads the component's own pods.
*/}}
{{- define "ad-serving.scheduling" -}}
{{- $values := index .ctx.Values .component }}
{{- with $values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- if $values.topologySpreadConstraints }}
{{- $selector := include "ad-serving.selectorLabels" . | fromYaml }}
{{- $constraints := list }}
{{- range $values.topologySpreadConstraints }}
{{- $constraint := deepCopy . }}
{{- if not $constraint.labelSelector }}
{{- $_ := set $constraint "labelSelector" (dict "matchLabels" $selector) }}
{{- end }}
{{- $constraints = append $constraints $constraint }}
{{- end }}
topologySpreadConstraints:
  {{- toYaml $constraints | nindent 2 }}
{{- end }}
{{- end }}
