{{/*
Helpers shared by the templates. Names are Karmada's (karmada-apiserver,
karmada-webhook, etcd, ...), so that addresses written for Karmada's chart
hold: the karmada-apiserver is karmada-apiserver.<namespace>.svc:5443.
*/}}

{{- define "karmada.namespace" -}}
{{ .Release.Namespace }}
{{- end -}}

{{/* The host cluster's DNS name of a Service of the release's namespace. */}}
{{- define "karmada.svc" -}}
{{ .name }}.{{ .root.Release.Namespace }}.svc.{{ .root.Values.clusterDomain }}
{{- end -}}

{{- define "karmada.apiserver.port" -}}5443{{- end -}}
{{- define "karmada.webhook.port" -}}8443{{- end -}}

{{- define "karmada.apiserver.url" -}}
https://{{ include "karmada.svc" (dict "name" "karmada-apiserver" "root" .) }}:{{ include "karmada.apiserver.port" . }}
{{- end -}}

{{- define "karmada.apiserver.externalURL" -}}
{{- if .Values.apiServer.externalURL -}}
{{ .Values.apiServer.externalURL }}
{{- else -}}
{{ include "karmada.apiserver.url" . }}
{{- end -}}
{{- end -}}

{{- define "karmada.webhook.url" -}}
https://{{ include "karmada.svc" (dict "name" "karmada-webhook" "root" .) }}:443
{{- end -}}

{{- define "karmada.aggregatedApiServer.port" -}}8443{{- end -}}
{{- define "karmada.search.port" -}}8443{{- end -}}

{{/* Where the karmada-apiserver reaches karmada-aggregated-apiserver (the ExternalName of its APIService's Service). */}}
{{- define "karmada.aggregatedApiServer.url" -}}
https://{{ include "karmada.svc" (dict "name" "karmada-aggregated-apiserver" "root" .) }}:443
{{- end -}}

{{- define "karmada.search.url" -}}
https://{{ include "karmada.svc" (dict "name" "karmada-search" "root" .) }}:443
{{- end -}}

{{- define "karmada.metricsAdapter.port" -}}8443{{- end -}}

{{- define "karmada.metricsAdapter.url" -}}
https://{{ include "karmada.svc" (dict "name" "karmada-metrics-adapter" "root" .) }}:443
{{- end -}}

{{/*
An image reference: registry/repository:tag. global.imageRegistry, when set,
replaces each image's registry; an empty tag is the chart's appVersion.
Called with (dict "root" $ "image" .Values.x.image).
*/}}
{{- define "karmada.image" -}}
{{- $registry := .root.Values.global.imageRegistry | default .image.registry -}}
{{- $tag := .image.tag | default .root.Chart.AppVersion -}}
{{- if $registry -}}
{{ $registry }}/{{ .image.repository }}:{{ $tag }}
{{- else -}}
{{ .image.repository }}:{{ $tag }}
{{- end -}}
{{- end -}}

{{/* imagePullSecrets of a pod: the global ones and the component's. */}}
{{- define "karmada.imagePullSecrets" -}}
{{- $secrets := concat (.root.Values.global.imagePullSecrets | default list) (.component.imagePullSecrets | default list) -}}
{{- if $secrets }}
imagePullSecrets:
{{- range $secrets }}
{{- if kindIs "string" . }}
  - name: {{ . }}
{{- else }}
  - {{ toYaml . | nindent 4 | trim }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{/* The labels every object of the release carries. */}}
{{- define "karmada.commonLabels" -}}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: karmada
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/*
Restricted Pod Security for a pod and its containers: non-root, no
privilege escalation, every capability dropped, the runtime's seccomp
profile, a read-only root file system.
*/}}
{{- define "karmada.podSecurityContext" -}}
securityContext:
  runAsNonRoot: true
  runAsUser: 65532
  runAsGroup: 65532
  fsGroup: 65532
  seccompProfile:
    type: RuntimeDefault
{{- end -}}

{{- define "karmada.containerSecurityContext" -}}
securityContext:
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  runAsNonRoot: true
  capabilities:
    drop: ["ALL"]
  seccompProfile:
    type: RuntimeDefault
{{- end -}}

{{/*
Scheduling of a component's pods: its node selector, tolerations, priority
class, and affinity; without an affinity of its own, replicas prefer
different nodes. Called with (dict "component" .Values.x "labels" .Values.x.labels).
*/}}
{{- define "karmada.scheduling" -}}
{{- with .component.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .component.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .component.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
affinity:
{{- if .component.affinity }}
  {{- toYaml .component.affinity | nindent 2 }}
{{- else }}
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          topologyKey: kubernetes.io/hostname
          labelSelector:
            matchLabels:
              {{- toYaml .labels | nindent 14 }}
{{- end }}
{{- end -}}

{{/* Extra flags of a component: --key=value, sorted. */}}
{{- define "karmada.extraArgs" -}}
{{- range $k, $v := . }}
- --{{ $k }}={{ $v }}
{{- end }}
{{- end -}}

{{/*
A component's PodDisruptionBudget: at most one replica down at a time.
Called with (dict "root" $ "name" "karmada-apiserver" "labels" .Values.x.labels).
*/}}
{{- define "karmada.pdb" -}}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ .name }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "karmada.commonLabels" .root | nindent 4 }}
    {{- toYaml .labels | nindent 4 }}
spec:
  maxUnavailable: 1
  selector:
    matchLabels:
      {{- toYaml .labels | nindent 6 }}
{{- end -}}

{{/*
The hours of a lifetime such as "8760h", as days for the certificate
functions; a lifetime in another form fails the install.
*/}}
{{- define "karmada.days" -}}
{{- if not (regexMatch "^[0-9]+h$" (toString .value)) -}}
{{- fail (printf "%s=%q: must be a number of hours such as 8760h (a year)" .name (toString .value)) -}}
{{- end -}}
{{- $hours := trimSuffix "h" (toString .value) | int -}}
{{- if lt $hours 24 -}}
{{- fail (printf "%s=%q: must be at least 24h" .name (toString .value)) -}}
{{- end -}}
{{ div $hours 24 }}
{{- end -}}

{{/* A kubeconfig for a client certificate of the control plane's CA. */}}
{{- define "karmada.kubeconfig" -}}
apiVersion: v1
kind: Config
clusters:
  - name: karmada-apiserver
    cluster:
      certificate-authority-data: {{ .ca | b64enc }}
      server: {{ .server }}
users:
  - name: {{ .user }}
    user:
      {{- if .dir }}
      client-certificate: {{ .dir }}/tls.crt
      client-key: {{ .dir }}/tls.key
      {{- else }}
      client-certificate-data: {{ .cert | b64enc }}
      client-key-data: {{ .key | b64enc }}
      {{- end }}
contexts:
  - name: karmada-apiserver
    context:
      cluster: karmada-apiserver
      user: {{ .user }}
current-context: karmada-apiserver
{{- end -}}

{{/*
The flags with which karmada-scheduler and karmada-descheduler reach the
scheduler estimators: the Services karmada-scheduler-estimator-<member> of
the release's namespace, verified by the estimators' CA, with the client
certificate of Secret karmada-scheduler-estimator-client (a YAML list).
*/}}
{{- define "karmada.estimatorClientArgs" -}}
- --scheduler-estimator-service-namespace={{ .Release.Namespace }}
- --scheduler-estimator-port=10352
- --scheduler-estimator-ca-file=/etc/karmada/estimator/ca.crt
- --scheduler-estimator-cert-file=/etc/karmada/estimator/tls.crt
- --scheduler-estimator-key-file=/etc/karmada/estimator/tls.key
{{- end -}}
