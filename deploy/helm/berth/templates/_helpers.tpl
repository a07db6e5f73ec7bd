{{/* The chart name (nameOverride), at most 63 characters. */}}
{{- define "berth.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The full name of the objects: fullnameOverride, else <release>-<name> (the release name alone when
it already contains the name), at most 63 characters (a DNS label, also the Service's name).
*/}}
{{- define "berth.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* chart label value: <name>-<version>. */}}
{{- define "berth.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The labels every object carries. */}}
{{- define "berth.labels" -}}
helm.sh/chart: {{ include "berth.chart" . }}
{{ include "berth.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: berth
{{- end }}

{{/* The labels the Deployment selects its Pods by (never change them: a selector is immutable). */}}
{{- define "berth.selectorLabels" -}}
app.kubernetes.io/name: {{ include "berth.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: controller
{{- end }}

{{/* The egress proxy's Pods (their own selector: the controller's would match them too). */}}
{{- define "berth.egressSelectorLabels" -}}
app.kubernetes.io/name: {{ include "berth.name" . }}-egress
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "berth.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "berth.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The namespace of the session Pods and PVCs. */}}
{{- define "berth.sessionsNamespace" -}}
{{- default .Release.Namespace .Values.sessions.namespace }}
{{- end }}

{{/* The Secret holding the API token, and its key. */}}
{{- define "berth.tokenSecretName" -}}
{{- default (printf "%s-api-token" (include "berth.fullname" .)) .Values.apiToken.existingSecret }}
{{- end }}

{{/* Whether the dashboard cookie is Secure: asked for, or TLS at the Ingress. */}}
{{- define "berth.secureCookie" -}}
{{- if or .Values.secureCookie (and .Values.ingress.enabled .Values.ingress.tls) }}true{{ end }}
{{- end }}

{{/* The controller replicas: exactly 1 on sqlite (one writer per data dir). */}}
{{- define "berth.replicas" -}}
{{- if eq .Values.store.backend "postgres" }}{{ .Values.replicaCount }}{{ else }}1{{ end }}
{{- end }}

{{/*
Every name the Host check must accept (--public-host): the Service's DNS names, the loopback names
(berth serve accepts them on its own port only; a `kubectl port-forward` uses any local port), the
ingress hosts, publicHosts.
*/}}
{{- define "berth.publicHosts" -}}
{{- $svc := include "berth.fullname" . }}
{{- $hosts := list $svc (printf "%s.%s" $svc .Release.Namespace) (printf "%s.%s.svc" $svc .Release.Namespace) (printf "%s.%s.svc.cluster.local" $svc .Release.Namespace) "127.0.0.1" "localhost" }}
{{- if .Values.ingress.enabled }}
{{- $hosts = concat $hosts .Values.ingress.hosts }}
{{- end }}
{{- $hosts = concat $hosts .Values.publicHosts }}
{{- $hosts | uniq | join "," }}
{{- end }}

{{/* Where the container finds its files. */}}
{{- define "berth.configDir" -}}/etc/berth/config{{- end }}
{{- define "berth.tokenDir" -}}/etc/berth/token{{- end }}
{{- define "berth.dataDir" -}}/var/lib/berth{{- end }}

{{/*
berth.yaml: the chart's kubernetes executor (in_cluster, the sessions namespace, the approved
secret_env), its profile (pod_template_file: the mounted podTemplate) and the store, over
.Values.config (the chart's keys win; secret_env lists are joined).
*/}}
{{- define "berth.config" -}}
{{- if hasKey .Values.config "store" }}
{{- fail "config.store: set store.backend (and store.postgres) instead; the chart writes berth.yaml's store block" }}
{{- end }}
{{- if or (hasKey .Values.sessions.kubernetes "pod_template") (hasKey .Values.sessions.kubernetes "pod_template_file") }}
{{- fail "sessions.kubernetes: set the template in sessions.podTemplate; the chart mounts it and sets pod_template_file" }}
{{- end }}
{{- $cfg := deepCopy .Values.config }}
{{- $execName := .Values.sessions.executor }}
{{- $profName := .Values.sessions.profile }}
{{- $brokered := values (.Values.sessions.network.brokers | default dict) | sortAlpha }}
{{- $approved := concat (dig "executors" $execName "secret_env" (list) $cfg) .Values.secretEnv.names $brokered | uniq }}
{{- $exec := dict "type" "kubernetes" "auth_mode" "in_cluster" "namespace" (include "berth.sessionsNamespace" .) }}
{{- if .Values.egress.enabled }}
{{- $labels := dict "app.kubernetes.io/name" (printf "%s-egress" (include "berth.name" .)) "app.kubernetes.io/instance" .Release.Name }}
{{- $_ := set $exec "egress_proxy" (dict "url" (printf "http://%s-egress.%s.svc:%v" (include "berth.fullname" .) .Release.Namespace .Values.egress.port) "namespace" .Release.Namespace "pod_labels" $labels) }}
{{- end }}
{{- if $approved }}{{ $_ := set $exec "secret_env" $approved }}{{ end }}
{{- $k8s := mergeOverwrite (deepCopy .Values.sessions.kubernetes) (dict "pod_template_file" (printf "%s/pod-template.yaml" (include "berth.configDir" .))) }}
{{- $store := dict "backend" "sqlite" }}
{{- if eq .Values.store.backend "postgres" }}
{{- $store = dict "backend" "postgres" "url_env" "BERTH_DATABASE_URL" "secret_key_env" "BERTH_SECRET_KEY" }}
{{- end }}
{{- $profile := dict "executor" $execName "kubernetes" $k8s }}
{{- if .Values.sessions.pool }}{{ $_ := set $profile "pool" .Values.sessions.pool }}{{ end }}
{{- if .Values.sessions.idle }}{{ $_ := set $profile "idle" .Values.sessions.idle }}{{ end }}
{{- if .Values.sessions.network }}{{ $_ := set $profile "network" .Values.sessions.network }}{{ end }}
{{- if .Values.egress.enabled }}
{{- $egress := dict }}
{{- if .Values.egress.hosts }}{{ $_ := set $egress "hosts" .Values.egress.hosts }}{{ end }}
{{- if .Values.egress.brokers }}{{ $_ := set $egress "brokers" .Values.egress.brokers }}{{ end }}
{{- if $egress }}{{ $_ := set $cfg "egress" $egress }}{{ end }}
{{- end }}
{{- $built := dict "executors" (dict $execName $exec) "profiles" (dict $profName $profile) }}
{{- $cfg = mergeOverwrite $cfg $built }}
{{- $_ := set $cfg "store" $store }}
{{- if not (dig "defaults" "executor" "" $cfg) }}
{{- $defaults := dig "defaults" (dict) $cfg }}
{{- $_ := set $defaults "executor" $profName }}
{{- $_ := set $cfg "defaults" $defaults }}
{{- end }}
{{- toYaml $cfg }}
{{- end }}
