// Package integration holds rlsweep's end-to-end tests (build tag integration): a real Temporal dev
// server, real worker processes, real trainer processes, real kills. Run them with
//
//	go test -tags integration ./integration/...
//
// after scripts/install-tools.sh has built the pinned Temporal CLI.
package integration
