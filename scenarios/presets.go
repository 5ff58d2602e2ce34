package scenarios

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Preset is a fixed scenario shape any system can be put under: the
// crash loop and the zombie of reo's own tests (TestCrashLoop,
// TestZombieInstance) written as steps of the faults table, so that
// `reo-chaos -scenario crash-loop -system mm2-eos` asks a peer the same
// question. Its seed draws the workload and the moments, never the shape.
type Preset struct {
	Name string
	Doc  string
	// Available reports whether the system and clusters can take it;
	// Why says why not.
	Available func(tg Target) bool
	Why       string
	Build     func(tg Target, seed uint64) Scenario
}

// Presets are the fixed scenarios, by name.
var Presets = []Preset{
	{
		Name: "crash-loop",
		Doc: "one instance SIGKILLed 10 times while a mixed transactional workload writes 6 partitions, " +
			"each kill 5–15 s after the restart (long enough for a JVM replicator to start and copy), restarted at once",
		Available: always,
		Build: func(tg Target, seed uint64) Scenario {
			rng := rand.New(rand.NewPCG(seed, 0xc4a5))
			sc := presetScenario(tg, seed, "crash-loop", 1)
			for range 10 {
				sc.Steps = append(sc.Steps,
					Step{Action: Wait, Dur: time.Duration(5000+rng.IntN(10_000)) * time.Millisecond, Broker: -1},
					Step{Action: Kill, Slot: 0, Broker: -1})
			}
			sc.Steps = append(sc.Steps, Step{Action: Wait, Dur: 5 * time.Second, Broker: -1})
			return sc
		},
	},
	{
		Name: "zombie",
		Doc: "three instances share the work; one is paused (SIGSTOP) for 20 s, past any session timeout, so its work " +
			"moves, and resumed as a zombie; then another for 35 s",
		Available: func(tg Target) bool { return tg.Caps.MaxInstances >= 2 },
		Why:       "the system runs one instance",
		Build: func(tg Target, seed uint64) Scenario {
			rng := rand.New(rand.NewPCG(seed, 0x20b1e))
			n := min(3, tg.Caps.MaxInstances)
			sc := presetScenario(tg, seed, "zombie", n)
			sc.Steps = []Step{
				{Action: Wait, Dur: time.Duration(6000+rng.IntN(4000)) * time.Millisecond, Broker: -1},
				{Action: Pause, Slot: 1, Dur: 20 * time.Second, Broker: -1},
				{Action: Wait, Dur: time.Duration(5000+rng.IntN(5000)) * time.Millisecond, Broker: -1},
				{Action: Pause, Slot: n - 1, Dur: 35 * time.Second, Broker: -1},
				{Action: Wait, Dur: 5 * time.Second, Broker: -1},
			}
			return sc
		},
	},
}

// PresetFor returns the preset named name.
func PresetFor(name string) (Preset, error) {
	var names []string
	for _, p := range Presets {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return Preset{}, fmt.Errorf("no preset scenario %q (want one of %v)", name, names)
}

// presetScenario is a preset's frame: the crash tests' workload (6
// partitions, DefaultProfile's shares) on tg's clusters.
func presetScenario(tg Target, seed uint64, name string, instances int) Scenario {
	return Scenario{Name: name, Seed: seed, Brokers: tg.Brokers, InProcess: tg.InProcess,
		Profile: DefaultProfile(6), Instances: max(1, instances)}
}
