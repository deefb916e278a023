package worker

import (
	"context"

	sdkworker "go.temporal.io/sdk/worker"

	"github.com/rlsweep/rlsweep/activities"
)

// otherSlots bounds the task kinds a trial queue's worker does not run (the SDK's own default).
const otherSlots = 1000

// placeSupplier is the SDK's activity slot supplier of a trial queue's worker, made of the worker's
// Places: without GPUs, a poll takes a place only while fewer than --slots segments hold a trainer, so
// a segment storing what its exited trainer left does not keep the next trial's segment waiting; on
// GPUs, only while the GPUs have room for another trial and every segment taken has been placed, so
// that fractional trials pack a GPU (four of resources.gpus 0.25 at once on one GPU) and a worker holds
// at most one segment it cannot place yet. The slots are the SDK's activity execution bound: a
// fixed-size bound of GPUs × --trials-per-gpu would run one 0.25 trial per GPU.
type placeSupplier struct{ p *activities.Places }

func (s placeSupplier) ReserveSlot(ctx context.Context, _ sdkworker.SlotReservationInfo) (*sdkworker.SlotPermit, error) {
	if err := s.p.Reserve(ctx); err != nil {
		return nil, err
	}
	return &sdkworker.SlotPermit{}, nil
}

func (s placeSupplier) TryReserveSlot(sdkworker.SlotReservationInfo) *sdkworker.SlotPermit {
	if !s.p.TryReserve() {
		return nil
	}
	return &sdkworker.SlotPermit{}
}

func (s placeSupplier) MarkSlotUsed(sdkworker.SlotMarkUsedInfo) {}

func (s placeSupplier) ReleaseSlot(sdkworker.SlotReleaseInfo) { s.p.Release() }

func (s placeSupplier) MaxSlots() int { return s.p.Limit() }

// placeTuner is a trial queue worker's tuner: its activity slots are places (placeSupplier).
func placeTuner(p *activities.Places) (sdkworker.WorkerTuner, error) {
	fixed := func() sdkworker.SlotSupplier {
		s, _ := sdkworker.NewFixedSizeSlotSupplier(otherSlots) // cannot fail for a positive size
		return s
	}
	return sdkworker.NewCompositeTuner(sdkworker.CompositeTunerOptions{
		WorkflowSlotSupplier:        fixed(),
		ActivitySlotSupplier:        placeSupplier{p},
		LocalActivitySlotSupplier:   fixed(),
		NexusSlotSupplier:           fixed(),
		SessionActivitySlotSupplier: fixed(),
	})
}
