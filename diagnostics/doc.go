// Package diagnostics holds the canonical PPO metric names, the streaming rules engine that stops
// diverging runs, the doctor that explains a finished run, and run statistics.
//
// It is a pure package: no Temporal, no network, no files it did not get handed.
package diagnostics
