// Package topology holds no code: its tests check scripts/topology.sh, which runs docker-compose.yml's
// topology as plain processes, against docker-compose.yml and the Kubernetes manifests in infra/k8s
// (services, binaries, environment, commands), and, with the build tag topology, run that topology with
// each worker in a network namespace of its own and inject faults (docs/deploy.md).
package topology
