package ppo

// GAE computes generalised advantage estimates (Schulman et al. 2016) over a rollout laid out time
// major: index t·n+i is step t of environment i, for T = len(rewards)/n steps.
//
//	δₜ = rₜ + γ·V(sₜ₊₁)·(1 − doneₜ) − V(sₜ)
//	Aₜ = δₜ + γλ·(1 − doneₜ)·Aₜ₊₁,   returnsₜ = Aₜ + V(sₜ)
//
// doneₜ is 1 when the episode ended at step t (terminated or truncated; a truncated step's reward
// already carries γ·V(final observation), so the episode boundary cuts the sum either way). V(sₜ₊₁)
// is values[(t+1)·n+i], or lastValues[i] after the last step. adv and returns must have the length
// of rewards.
func GAE(rewards, values, dones, lastValues []float64, n int, gamma, lambda float64, adv, returns []float64) {
	steps := len(rewards) / n
	for i := 0; i < n; i++ {
		var last float64
		for t := steps - 1; t >= 0; t-- {
			k := t*n + i
			next := lastValues[i]
			if t < steps-1 {
				next = values[k+n]
			}
			notDone := 1 - dones[k]
			delta := rewards[k] + gamma*next*notDone - values[k]
			last = delta + gamma*lambda*notDone*last
			adv[k] = last
			returns[k] = last + values[k]
		}
	}
}
