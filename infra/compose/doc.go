// Package compose holds no code: its test loads the repository's docker-compose.yml with the
// compose-spec Go loader and checks it against what rlsweep's worker and CLI expect (task queues,
// search attributes, the Temporal address, the artifact store). It needs no Docker engine.
package compose
