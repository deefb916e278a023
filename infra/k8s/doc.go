// Package k8s holds no code: its test parses the Kubernetes manifests in this directory and checks the
// rlsweep workers against what the worker expects (task queues, one slot per GPU).
package k8s
