package worker

import (
	"context"
	"errors"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The Temporal SDK's log messages that Logger lowers to Debug (go.temporal.io/sdk/internal).
const (
	sdkActivityError  = "Activity error."
	sdkHeartbeatError = "RecordActivityHeartbeat with error"
	trainActivityType = "TrainSegment"
)

// Logger is l for a worker's Temporal client: one log line per failure, and none above Info for an
// expected cancellation. It passes everything through except three of the SDK's lines, which it lowers
// to Debug:
//
//   - "Activity error." of TrainSegment: the activity logs each attempt that failed itself ("segment
//     attempt failed", with the sweep, trial, segment, attempt and error type, the worker's secrets
//     masked), and each cancelled one at Info; the SDK's line would say it a second time.
//   - "Activity error." of any activity whose error is a cancellation: a prune, a stop, a sweep
//     cancelled while its probes ran.
//   - "RecordActivityHeartbeat with error" whose error is a cancellation: the server's answer that the
//     attempt is cancelled (a prune, a stop, a sweep cancel: the SDK warns of the very heartbeat that
//     brings the cancel), or a context cancelled as the attempt ended before the heartbeat went out. A
//     heartbeat that fails for any other reason (the server unreachable) stays a warning.
func Logger(l log.Logger) log.Logger {
	if l == nil {
		return nil
	}
	return quiet{l: l}
}

type quiet struct {
	l    log.Logger
	with []any // the key-value pairs of With, for matching
}

var _ log.WithLogger = quiet{}

func (q quiet) With(keyvals ...any) log.Logger {
	return quiet{l: log.With(q.l, keyvals...), with: append(append([]any(nil), q.with...), keyvals...)}
}

func (q quiet) Debug(msg string, keyvals ...any) { q.l.Debug(msg, keyvals...) }
func (q quiet) Info(msg string, keyvals ...any)  { q.l.Info(msg, keyvals...) }

func (q quiet) Warn(msg string, keyvals ...any) {
	if q.expected(msg, keyvals) {
		q.l.Debug(msg, keyvals...)
		return
	}
	q.l.Warn(msg, keyvals...)
}

func (q quiet) Error(msg string, keyvals ...any) {
	if q.expected(msg, keyvals) {
		q.l.Debug(msg, keyvals...)
		return
	}
	q.l.Error(msg, keyvals...)
}

// expected says whether a warning or error line is one Logger lowers to Debug.
func (q quiet) expected(msg string, keyvals []any) bool {
	switch msg {
	case sdkActivityError:
		if typ, _ := q.value("ActivityType", keyvals).(string); typ == trainActivityType {
			return true
		}
		err, _ := q.value("Error", keyvals).(error)
		return err != nil && (temporal.IsCanceledError(err) || cancelled(err))
	case sdkHeartbeatError:
		err, _ := q.value("Error", keyvals).(error)
		return err != nil && (temporal.IsCanceledError(err) || cancelled(err))
	}
	return false
}

// cancelled says whether err is a context's cancellation, as Go returns it or as the client's gRPC call
// does (status Canceled, serviceerror.Canceled).
func cancelled(err error) bool {
	var sc *serviceerror.Canceled
	return errors.Is(err, context.Canceled) || errors.As(err, &sc) || status.Code(err) == codes.Canceled
}

// value is the value of key in keyvals, else in the pairs of With; nil when absent.
func (q quiet) value(key string, keyvals []any) any {
	for _, kv := range [][]any{keyvals, q.with} {
		for i := 0; i+1 < len(kv); i += 2 {
			if k, ok := kv[i].(string); ok && k == key {
				return kv[i+1]
			}
		}
	}
	return nil
}
