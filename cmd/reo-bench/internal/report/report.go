package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/reo-kafka/reo/internal/logtext"
)

// The systems under test, in the order runs and reports show them.
const (
	SysPipe   = "pipe"
	SysReo    = "reo"
	SysMM2    = "mm2"
	SysMM2EOS = "mm2-eos"
)

var AllSystems = []string{SysPipe, SysReo, SysMM2, SysMM2EOS}

// reo with an application's consumer group reading its source topic: its
// offsets synced by reo every --group-sync-interval (reo-groupsync), or
// the same group with reo's sync off (reo-groupsync-off), so that the two
// differ in the sync alone. Run only when named in --systems.
const (
	SysReoGroupSyncOff = "reo-groupsync-off"
	SysReoGroupSync    = "reo-groupsync"
)

// SysPipeTxn is the pipe with each poll's records in one destination
// transaction (still at-least-once): what Kafka's transactions add to a
// copy loop's latency and CPU on the same machine, next to reo. Run only
// when named.
const SysPipeTxn = "pipe-txn"

// SysPipeFlush is the pipe waiting for each poll's records to be produced
// and marking their offsets at once, instead of marking each record from
// its produce callback: pipe-txn's loop without the transaction, so that
// the two differ in the transaction alone. Run only when named.
const SysPipeFlush = "pipe-flush"

// SysReoBaseline is reo built from another revision (--baseline), run
// with the same flags as reo on every workload, so that a change to reo is
// measured side by side with what it changes. Run only when named.
const SysReoBaseline = "reo-baseline"

// KnownSystems are AllSystems and those run only when named.
var KnownSystems = append(slices.Clone(AllSystems), SysPipeFlush, SysPipeTxn, SysReoGroupSyncOff, SysReoGroupSync, SysReoBaseline)

// PromisesExactlyOnce reports whether sys promises exactly-once copies:
// reo and MirrorMaker 2 with exactly-once source support. The others are
// at-least-once (pipe-txn too: its offsets are committed outside its
// transactions), so a record they copy twice after a restart or a crash
// is the cost they state, not a fault.
func PromisesExactlyOnce(sys string) bool {
	return IsReo(sys) || sys == SysMM2EOS
}

// IsReo reports whether sys runs cmd/reo.
func IsReo(sys string) bool {
	return sys == SysReo || sys == SysReoGroupSync || sys == SysReoGroupSyncOff || sys == SysReoBaseline
}

// Report is bench.json: where and how the run was made, and one Result per
// system and workload. Every Result of a Report was measured in the same
// run on the same clusters, so ratios between them hold on a noisy machine.
type Report struct {
	Machine      Machine `json:"machine"`
	KafkaVersion string  `json:"kafka_version"`
	MM2Version   string  `json:"mm2_version,omitempty"`
	// MM2Heap is MirrorMaker 2's heap options ("" in reports before
	// 2026-12-04, whose MirrorMaker 2 ran with -Xms256m -Xmx512m).
	MM2Heap  string `json:"mm2_heap,omitempty"`
	Command  string `json:"command"`
	Provider string `json:"provider"`
	// Unproxied is true when clients reached the brokers directly; reports
	// made before the field existed crossed a toxiproxy link per broker.
	// ServerJVM is true when the brokers ran with Kafka's start-script JVM
	// options rather than the local provider's test settings.
	Unproxied bool `json:"unproxied,omitempty"`
	ServerJVM bool `json:"server_jvm,omitempty"`
	// BrokerData is where the local brokers kept their files, with its
	// filesystem and mount options ("" in older reports and for other
	// providers).
	BrokerData  string    `json:"broker_data,omitempty"`
	Started     time.Time `json:"started"`
	DurationSec float64   `json:"duration_sec"`
	// Notes are caveats that apply to the whole run (an in-process
	// provider, a MirrorMaker version other than the brokers').
	Notes []string `json:"notes,omitempty"`
	// Repeats is how many times each system ran each workload,
	// interleaved (0 in older reports: once).
	Repeats int `json:"repeats,omitempty"`
	// PipeTuning is the pipe's client settings (its flags), when tuned.
	PipeTuning []string `json:"pipe_tuning,omitempty"`
	// CostCurve says the run was the cost curve (--cost-curve).
	CostCurve bool `json:"cost_curve,omitempty"`
	// WindowFrom is the share of a saturation run's records seen before
	// its measured window opened (--window-from; 0 in older reports: at
	// the first records seen).
	WindowFrom float64 `json:"window_from,omitempty"`
	// StableTiming says saturation runs were timed on the destination's
	// last stable offsets (false in older reports: on the harness
	// consumer's sightings).
	StableTiming bool `json:"stable_timing,omitempty"`
	// CountAfter says the harness consumer that counts a saturation
	// run's records started only once the destination's last stable
	// offsets had settled at or above them, after the measured window
	// (false in older reports and with --watch-live: it read the
	// records as they came, on the same machine as the system).
	CountAfter bool     `json:"count_after,omitempty"`
	Results    []Result `json:"results"`
	// Ceilings are the bare producer's and consumer's rates, per
	// workload and repetition.
	Ceilings []Ceiling `json:"ceilings,omitempty"`
	// Failover is the failover comparison (--failover), when it ran.
	Failover *FailoverReport `json:"failover,omitempty"`
}

// Ceiling is what the clusters take and give with no replicator in
// between, in the same run as the systems: a bare producer writing the
// workload's records into the destination, and a bare consumer reading
// them (read_committed) from the source, both franz-go tuned for
// throughput. A replicator cannot be faster than the smaller of the two.
type Ceiling struct {
	Workload             string  `json:"workload"`
	Repeat               int     `json:"repeat"`
	ProduceRecordsPerSec float64 `json:"produce_records_per_sec"`
	ProduceMBPerSec      float64 `json:"produce_mb_per_sec"`
	ConsumeRecordsPerSec float64 `json:"consume_records_per_sec"`
	ConsumeMBPerSec      float64 `json:"consume_mb_per_sec"`
	Error                string  `json:"error,omitempty"`
}

// Machine describes where the run was made.
type Machine struct {
	CPUs      int     `json:"cpus"`
	CPUModel  string  `json:"cpu_model,omitempty"`
	MemoryGiB float64 `json:"memory_gib,omitempty"`
	OS        string  `json:"os"`
	Kernel    string  `json:"kernel,omitempty"`
	Go        string  `json:"go"`
	Java      string  `json:"java,omitempty"`
	// LoadAvg is the 1-minute load average when the run started: other
	// work on the machine shows here.
	LoadAvg float64 `json:"load_avg_1m"`
	// GuestMemory is set when the machine is a guest that hands freed
	// memory back to its host (free page reporting).
	GuestMemory *GuestMemory `json:"guest_memory,omitempty"`
}

// GuestMemory is what a guest with free page reporting did with its
// memory over the plan (--guest-memory).
type GuestMemory struct {
	// Order is the reporting order before the plan (2^order pages: the
	// smallest free block handed back); -1 with OrderError when it could
	// not be read. StoppedBefore is true when it was already too high for
	// any free block (someone stopped the reporting before the plan).
	Order         int    `json:"reporting_order"`
	OrderError    string `json:"order_error,omitempty"`
	StoppedBefore bool   `json:"stopped_before,omitempty"`
	// Held is true when reo-bench stopped the reporting for the plan
	// (and put Order back at its end); HoldError says why it could not
	// when --guest-memory keep asked for it.
	Held      bool   `json:"held"`
	HoldError string `json:"hold_error,omitempty"`
	// RestoreError says why the old order could not be put back.
	RestoreError string `json:"restore_error,omitempty"`
	// TouchedGiB is the memory reo-bench touched before the first run,
	// so the guest held it, and TouchSec how long that took.
	TouchedGiB float64 `json:"touched_gib,omitempty"`
	TouchSec   float64 `json:"touch_sec,omitempty"`
	// ReturnedGiB is what the guest handed back over the whole plan,
	// when the kernel counts it.
	ReturnedGiB *float64 `json:"returned_gib,omitempty"`
}

// text says what the guest did with its memory, for bench.md.
func (g *GuestMemory) text() string {
	var b strings.Builder
	b.WriteString("this machine is a guest that can hand the memory it frees back to its host (free page reporting")
	if g.Order >= 0 {
		fmt.Fprintf(&b, ", blocks of 2^%d pages and up", g.Order)
	} else {
		fmt.Fprintf(&b, "; its order could not be read: %s", g.OrderError)
	}
	b.WriteString("), and a process that touches memory anew then waits for the host in system time")
	switch {
	case g.StoppedBefore:
		b.WriteString("; the reporting was already stopped before this plan, and reo-bench left it so")
	case g.Held:
		b.WriteString("; reo-bench stopped the reporting for this plan (--guest-memory keep)")
		if g.RestoreError != "" {
			fmt.Fprintf(&b, " and could not put the old setting back at its end (%s)", g.RestoreError)
		} else {
			b.WriteString(" and put the old setting back at its end")
		}
		if g.TouchedGiB > 0 {
			fmt.Fprintf(&b, "; it touched %.1f GiB before the first run (%.0f s)", g.TouchedGiB, g.TouchSec)
		}
	case g.HoldError != "":
		fmt.Fprintf(&b, "; --guest-memory keep could not stop the reporting (%s)", g.HoldError)
	default:
		b.WriteString("; the reporting ran through this plan (--guest-memory keep stops it)")
	}
	if g.ReturnedGiB != nil {
		fmt.Fprintf(&b, "; %.1f GiB were handed back during the plan", *g.ReturnedGiB)
	}
	return b.String()
}

// Workload is one point of the workload axes.
type Workload struct {
	Name        string `json:"name"`
	RecordBytes int    `json:"record_bytes"`
	Partitions  int    `json:"partitions"`
	Instances   int    `json:"instances"`
	// Records is how many records the saturation phase preloads.
	Records int `json:"records"`
	// ReoCommitInterval and ReoMaxInflight are reo's transaction interval
	// and --max-inflight-bytes (which sets its transaction size); empty
	// means reo's defaults. Workloads that set them run reo only.
	ReoCommitInterval string `json:"reo_commit_interval,omitempty"`
	ReoCommitLinger   string `json:"reo_commit_linger,omitempty"`
	ReoMaxInflight    string `json:"reo_max_inflight_bytes,omitempty"`
	// ReoShards is reo's --shards (empty: auto, the default).
	ReoShards string `json:"reo_shards,omitempty"`
	// Topics is how many source topics of Partitions partitions each the
	// records are spread over (0 or 1: one).
	Topics int `json:"topics,omitempty"`
	// Link, when set, puts distance between the replicator and one
	// cluster: the replicator's clients cross a link with this round
	// trip time and bandwidth (the harness's own go direct).
	Link *Link `json:"link,omitempty"`
	// SaturationOnly workloads have no latency phase (the cost curve).
	SaturationOnly bool `json:"saturation_only,omitempty"`
}

// Link is the distance a geo workload puts between the replicator and
// one cluster: half the round trip each way, with jitter, and a
// bandwidth cap each way (toxiproxy's, per connection).
type Link struct {
	// Side is "source" or "destination".
	Side          string  `json:"side"`
	RTTMs         float64 `json:"rtt_ms"`
	JitterMs      float64 `json:"jitter_ms"`
	BandwidthKBps int     `json:"bandwidth_kbps"`
}

// TopicCount is how many topics the workload's records are spread over.
func (w Workload) TopicCount() int { return max(1, w.Topics) }

// ReoOnly reports whether w varies a reo setting, so only reo runs it.
func (w Workload) ReoOnly() bool {
	return w.ReoCommitInterval != "" || w.ReoCommitLinger != "" || w.ReoMaxInflight != "" || w.ReoShards != ""
}

// Base is the workload w varies: the same records without reo settings.
func (w Workload) Base() Workload {
	w.ReoCommitInterval, w.ReoCommitLinger, w.ReoMaxInflight, w.ReoShards = "", "", "", ""
	w.Name = WorkloadName(w)
	return w
}

// WorkloadName names w by what sets it apart: size, partitions (per
// topic, with the topic count when several), instances, reo's settings,
// the link.
func WorkloadName(w Workload) string {
	n := fmt.Sprintf("%s-p%d-i%d", SizeName(w.RecordBytes), w.Partitions, w.Instances)
	if w.Topics > 1 {
		n = fmt.Sprintf("%s-t%dx%d-i%d", SizeName(w.RecordBytes), w.Topics, w.Partitions, w.Instances)
	}
	if l := w.Link; l != nil {
		side := "src"
		if l.Side == "destination" {
			side = "dst"
		}
		n += fmt.Sprintf("-%s-rtt%gms", side, l.RTTMs)
	}
	if w.ReoCommitInterval != "" {
		n += "-ci" + w.ReoCommitInterval
	}
	if w.ReoCommitLinger != "" {
		n += "-linger" + w.ReoCommitLinger
	}
	if w.ReoMaxInflight != "" {
		n += "-inflight" + w.ReoMaxInflight
	}
	if w.ReoShards != "" {
		n += "-shards" + w.ReoShards
	}
	return n
}

// SizeName is a record size as the report writes it: 1KiB, 100B.
func SizeName(b int) string {
	switch {
	case b >= 1<<10 && b%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", b>>10)
	default:
		return fmt.Sprintf("%dB", b)
	}
}

// Percentile is one point of a latency distribution.
type Percentile struct {
	P  float64 `json:"p"` // 0..100
	Ms float64 `json:"ms"`
}

// Result is what one system did on one workload. A Result with Verified
// false is not a result: the destination did not match the source.
type Result struct {
	System   string   `json:"system"`
	Workload Workload `json:"workload"`
	// Repeat is which repetition of the workload this run was (1, 2, ...;
	// 0 in reports made before repetitions, read as 1), and Order its
	// place among the systems in that repetition (1 ran first).
	Repeat int `json:"repeat,omitempty"`
	Order  int `json:"order,omitempty"`
	// Skipped says why the system did not run the workload (then nothing
	// else is a figure).
	Skipped string `json:"skipped,omitempty"`

	RecordsPerSec   float64 `json:"records_per_sec"`
	MBPerSec        float64 `json:"mb_per_sec"`
	P50Ms           float64 `json:"p50_ms"`
	P99Ms           float64 `json:"p99_ms"`
	P999Ms          float64 `json:"p999_ms"`
	CPUSecondsPerGB float64 `json:"cpu_seconds_per_gb"`
	PeakRSSMB       float64 `json:"peak_rss_mb"`
	Verified        bool    `json:"verified"`
	// PeakRSSAtSec is when the saturation run's peak RSS was first seen,
	// in seconds from the system's start (its start-up included).
	PeakRSSAtSec float64 `json:"peak_rss_at_sec,omitempty"`

	// StartupSec is from starting the system to the first record visible
	// in the destination; the throughput figures exclude it.
	StartupSec float64 `json:"startup_sec"`
	// Restart is the run's restart after its saturation phase (--restart),
	// and Crash its crash after that (--crash); nil when not measured.
	Restart *Restart `json:"restart,omitempty"`
	Crash   *Restart `json:"crash,omitempty"`
	// SharesSettledSec is, for a saturation run of several reo instances,
	// the seconds from the start until every instance owned a share of
	// the shards (before that some had none); 0 when not
	// measured or never seen. WindowOpenSec is when the measured window
	// opened, from the same start.
	SharesSettledSec float64 `json:"shares_settled_sec,omitempty"`
	WindowOpenSec    float64 `json:"window_open_sec,omitempty"`
	// SaturationSec is the measured window (Report.WindowFrom).
	SaturationSec float64 `json:"saturation_sec"`
	// WindowRates is the saturation rate over windows that open at other
	// shares of the records: how much the figure owes to where the window
	// opens (absent in older reports).
	WindowRates []WindowRate `json:"window_rates,omitempty"`
	// Progress is when (seconds after the system started) the harness
	// first saw each twentieth of the records: the shape of the run.
	Progress []float64 `json:"progress_sec,omitempty"`
	// StableProgress is the same from the destination's last stable
	// offsets, sampled every StableEvery (less often from 1,000 partitions) without reading records.
	StableProgress []float64 `json:"stable_progress_sec,omitempty"`
	// WatcherRecordsPerSec is the saturation rate timed on the harness
	// consumer's sightings, as reports before 2026-12-02 were; Timing is
	// "consumer" when the run's figures are timed so (no usable stable
	// offsets), empty when on the stable offsets.
	WatcherRecordsPerSec float64 `json:"watcher_records_per_sec,omitempty"`
	Timing               string  `json:"timing,omitempty"`
	// CountStartSec is when (seconds after the system started) the
	// harness consumer began counting the run's records, when it started
	// after the run (Report.CountAfter): then the consumer has no rate of
	// its own, and Progress is absent.
	CountStartSec float64 `json:"count_start_sec,omitempty"`
	// DownstreamRecordsPerSec is how fast a bare read_committed consumer
	// (the consume ceiling's settings) read the destination topics back
	// after the run: what the system's output costs its readers.
	DownstreamRecordsPerSec float64 `json:"downstream_records_per_sec,omitempty"`
	// RunCPUSecondsPerGB is the system's processes' CPU from their start
	// to the run's last record visible in the destination, over every
	// record the run copied: start-up included, and what a system that
	// reads the source ahead of what it writes did before the measured
	// window opened, which CPUSecondsPerGB leaves out
	// (reports/bench-geo/cpu-window).
	RunCPUSecondsPerGB float64 `json:"run_cpu_seconds_per_gb,omitempty"`
	// OfferedRate and AchievedRate are the latency phase's target and the
	// rate the harness producer actually reached (records/s).
	OfferedRate    float64      `json:"offered_records_per_sec,omitempty"`
	AchievedRate   float64      `json:"achieved_records_per_sec,omitempty"`
	LatencySamples int          `json:"latency_samples,omitempty"`
	Latency        []Percentile `json:"latency_percentiles,omitempty"`
	// BrokerCPUSecondsPerGB is both brokers' CPU over the saturation
	// window per GB replicated (transactions cost broker CPU too);
	// HarnessCPUSecondsPerGB is reo-bench's own (the toxiproxy links every
	// system's traffic crosses, and the counting consumer).
	BrokerCPUSecondsPerGB  float64 `json:"broker_cpu_seconds_per_gb,omitempty"`
	HarnessCPUSecondsPerGB float64 `json:"harness_cpu_seconds_per_gb,omitempty"`
	// BrokerThreadCPU is the brokers' CPU over the same window per GB,
	// by cluster ("source", "destination") and by what the threads do
	// (request handlers, network, transaction markers, ...: the groups
	// of reo-bench's measure.BrokerThreadGroups); local clusters only.
	BrokerThreadCPU map[string]map[string]float64 `json:"broker_thread_cpu_seconds_per_gb,omitempty"`
	// Checked counts the records the oracle compared (source side, both
	// phases); Violations counts its findings by kind.
	Checked int64 `json:"checked_records"`
	// ReoSaturation and ReoLatency are reo's own metrics at the end of
	// each phase (reo only).
	ReoSaturation *ReoStats `json:"reo_saturation,omitempty"`
	ReoLatency    *ReoStats `json:"reo_latency,omitempty"`
	// LatencyGC is what the brokers' garbage collection did during the
	// latency phase's measured window (local clusters only).
	LatencyGC *LatencyGC `json:"latency_gc,omitempty"`
	// MachineBusyShare and MachineStealShare are the shares (0-1) of the
	// whole machine's CPU time over the saturation run's measured window
	// that was busy, and that the hypervisor gave to others while this
	// machine wanted it (/proc/stat).
	MachineBusyShare  float64 `json:"machine_busy_share,omitempty"`
	MachineStealShare float64 `json:"machine_steal_share,omitempty"`
	// MachineSystemShare is the share of the machine's CPU time in the
	// same window the kernel spent for processes (page faults among it),
	// and GuestReturnedMiB what the guest handed back to its host in it
	// (free page reporting; nil when the kernel does not count it).
	MachineSystemShare float64  `json:"machine_system_share,omitempty"`
	GuestReturnedMiB   *float64 `json:"guest_returned_mib,omitempty"`
	// SaturationGC is the brokers' GC pauses in the saturation run's
	// measured window (local clusters only).
	SaturationGC *SaturationGC  `json:"saturation_gc,omitempty"`
	Violations   map[string]int `json:"violations,omitempty"`
	// GroupSync is the group sync systems' check of their application
	// group at the end of each phase.
	GroupSync []GroupSyncCheck `json:"group_sync,omitempty"`
	Error     string           `json:"error,omitempty"`
}

// Write writes bench.json, bench.md and the SVG charts into dir.
func (r *Report) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create report dir %s: %w", dir, err)
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode bench.json: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bench.json"), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write bench.json: %w", err)
	}
	charts, err := writeCharts(dir, r)
	if err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "bench.md"))
	if err != nil {
		return fmt.Errorf("write bench.md: %w", err)
	}
	defer f.Close()
	if err := r.Markdown(f, charts); err != nil {
		return fmt.Errorf("write bench.md: %w", err)
	}
	return f.Close()
}

// ReadReport reads a bench.json.
func ReadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read report: %w", err)
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decode report %s: %w", path, err)
	}
	return &r, nil
}

// workloads lists the distinct workloads of r in first-seen order.
func (r *Report) workloads() []Workload {
	var out []Workload
	seen := map[string]bool{}
	for _, x := range r.Results {
		if !seen[x.Workload.Name] {
			seen[x.Workload.Name] = true
			out = append(out, x.Workload)
		}
	}
	return out
}

func fmtRatio(v float64, ok bool) string {
	if !ok {
		return "–"
	}
	return fmt.Sprintf("%.2f×", v)
}

func fmtNum(v float64) string {
	switch {
	case v == 0:
		return "–"
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// Markdown writes bench.md: how the run was made, one table per workload
// with ratios to pipe and to mm2-eos, the goals for reo, and the charts.
func (r *Report) Markdown(w io.Writer, charts []string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# reo-bench report\n\n")
	fmt.Fprintf(&b, "Command: `%s`\n\n", r.Command)
	fmt.Fprintf(&b, "- started %s, took %s\n", r.Started.UTC().Format(time.RFC3339), (time.Duration(r.DurationSec) * time.Second).String())
	fmt.Fprintf(&b, "- machine: %d CPUs (%s), %.0f GiB, %s %s, load average %.2f at start; %s; %s\n",
		r.Machine.CPUs, r.Machine.CPUModel, r.Machine.MemoryGiB, r.Machine.OS, r.Machine.Kernel, r.Machine.LoadAvg, r.Machine.Go, r.Machine.Java)
	fmt.Fprintf(&b, "- clusters: provider %s, Apache Kafka %s, one source and one destination cluster of 1 broker each on 127.0.0.1\n", r.Provider, r.KafkaVersion)
	if r.BrokerData != "" {
		fmt.Fprintf(&b, "- broker data: %s\n", r.BrokerData)
	}
	if g := r.Machine.GuestMemory; g != nil {
		fmt.Fprintf(&b, "- guest memory: %s\n", g.text())
	}
	if r.MM2Version != "" {
		fmt.Fprintf(&b, "- MirrorMaker 2: connect-mirror %s, dedicated mode, heap %s\n", r.MM2Version, r.mm2Heap())
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "- **note:** %s\n", n)
	}
	if r.Repeats > 1 {
		fmt.Fprintf(&b, "- every system ran every workload %d times, interleaved (the order of the systems rotated between repetitions); figures are the median with the range in brackets, ratios are of medians\n", r.Repeats)
	}
	if len(r.PipeTuning) > 0 {
		fmt.Fprintf(&b, "- the pipe's client settings: `%s` (franz-go defaults otherwise)\n", strings.Join(r.PipeTuning, " "))
	}
	b.WriteString("\n")
	b.WriteString(r.targetsText())
	if r.CostCurve {
		b.WriteString(r.costCurveText())
	}
	b.WriteString(r.PlacementText())

	for _, wl := range r.workloads() {
		fmt.Fprintf(&b, "## %s\n\n", wl.Name)
		fmt.Fprintf(&b, "%d records of %s over %d partitions, %d replicator instance(s)", wl.Records, SizeName(wl.RecordBytes), wl.Partitions*wl.TopicCount(), wl.Instances)
		if wl.Topics > 1 {
			fmt.Fprintf(&b, " (%d topics of %d partitions)", wl.Topics, wl.Partitions)
		}
		if l := wl.Link; l != nil {
			fmt.Fprintf(&b, "; the replicator reaches the %s across a link of %g ms round trip (± %g ms each way) capped at %d KB/s each way per connection, the harness's own clients directly", l.Side, l.RTTMs, l.JitterMs, l.BandwidthKBps)
		}
		if wl.SaturationOnly {
			b.WriteString("; saturation only")
		}
		if wl.ReoOnly() {
			fmt.Fprintf(&b, "; reo only, with --commit-interval %s --commit-linger %s --max-inflight-bytes %s --shards %s (ratios against %s)",
				orDefault(wl.ReoCommitInterval), orDefault(wl.ReoCommitLinger), orDefault(wl.ReoMaxInflight), orDefault(wl.ReoShards), wl.Base().Name)
		}
		b.WriteString(".\n\n")
		b.WriteString(r.workloadTable(wl))
		b.WriteString("\n")
		b.WriteString(r.windowRatesText(wl))
		b.WriteString(r.runsText(wl))
		b.WriteString(r.downstreamText(wl))
		b.WriteString(r.runCPUText(wl))
		b.WriteString(r.restartText(wl))
		b.WriteString(r.brokerThreadsText(wl))
		if ts := r.Targets(wl.Name); len(ts) > 0 && !wl.ReoOnly() {
			b.WriteString("Goals for reo on this workload:\n\n| goal | want | got | met | margin |\n|---|---|---|:---:|---|\n")
			for _, t := range ts {
				met := "✅"
				if !t.Met {
					met = "❌"
				}
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", t.Name, t.Want, t.Got, met, t.Margin)
			}
			b.WriteString("\n")
			for _, t := range ts {
				if t.Why != "" {
					fmt.Fprintf(&b, "Why %s is missed: %s.\n\n", t.Name, t.Why)
				}
			}
		}
		for _, x := range r.Results {
			if x.Workload.Name != wl.Name {
				continue
			}
			for _, ph := range []struct {
				name string
				st   *ReoStats
			}{{"saturation", x.ReoSaturation}, {"latency", x.ReoLatency}} {
				if ph.st != nil {
					steps := ph.st.Steps()
					if steps != "" {
						steps = " (" + steps + ")"
					}
					fmt.Fprintf(&b, "- %s's own metrics%s, %s phase: %.0f transactions of %.0f records on average; commit (flush records and checkpoints, EndTxn) %.1f ms on average%s, p99 ≤ %.0f ms; %.0f aborted%s\n",
						x.System, repeatLabel(x), ph.name, ph.st.Transactions, ph.st.RecordsPerTxn, ph.st.CommitMsAvg, steps, ph.st.CommitP99Ms, ph.st.Aborted, sharesText(x, ph.name))
				}
			}
			if x.Error != "" {
				fmt.Fprintf(&b, "- %s%s: %s\n", x.System, repeatLabel(x), strings.ReplaceAll(logtext.Head(x.Error, 6), "\n", " "))
			}
			for _, a := range []struct {
				what string
				rs   *Restart
			}{{"restart", x.Restart}, {"crash", x.Crash}} {
				if a.rs != nil && a.rs.Error != "" {
					fmt.Fprintf(&b, "- %s%s, %s: %s\n", x.System, repeatLabel(x), a.what, strings.ReplaceAll(logtext.Head(a.rs.Error, 6), "\n", " "))
				}
			}
			if x.Skipped != "" {
				fmt.Fprintf(&b, "- %s skipped: %s\n", x.System, x.Skipped)
			}
		}
		b.WriteString("\n")
	}
	if len(charts) > 0 {
		b.WriteString("## Charts\n\n")
		for _, c := range charts {
			fmt.Fprintf(&b, "![%s](%s)\n\n", strings.TrimSuffix(c, ".svg"), c)
		}
	}
	if r.Failover != nil {
		r.Failover.markdown(&b)
	}
	if len(r.Results) > 0 {
		b.WriteString(GroupSyncText(r))
		b.WriteString(strings.NewReplacer("{window}", r.windowText(), "{mm2heap}", r.mm2Heap()).Replace(methodText))
	}
	b.WriteString(r.setupText())
	_, err := io.WriteString(w, b.String())
	return err
}

func orDefault(s string) string {
	if s == "" {
		return "default"
	}
	return s
}

// violationSummary sums the oracle's findings over system's runs on
// workload, by kind; "(error)" when a run failed without any.
func (r *Report) violationSummary(system, workload string) string {
	counts := map[string]int{}
	failed := false
	for _, x := range r.Results {
		if x.System != system || x.Workload.Name != workload {
			continue
		}
		for k, n := range x.Violations {
			counts[k] += n
		}
		failed = failed || (!x.Verified && x.Error != "")
	}
	if len(counts) == 0 {
		if failed {
			return "(error)"
		}
		return ""
	}
	return CountsText(counts)
}

const methodText = `## How it was measured

- **Same run, same clusters.** Every system replicates on the same two
  single-broker Apache Kafka clusters, one after the other, each into topics
  of its own (source topic preloaded identically, destination topic created
  empty with the same partition count). Nothing else of the bench runs while
  a system is measured, apart from the harness's sampling of the
  destination's last stable offsets and of the processes' CPU, and, in
  reports before 2026-12-04 or with --watch-live, the consumer that
  counts the records in the destination.
- **Repetitions.** With more than one run per system, the runs are
  interleaved: each repetition preloads fresh topics for every system and
  runs them in an order rotated by one from the last (on a small machine
  the system that runs first after a pause is measurably slower). Tables
  give the median over the runs and the range in brackets; ratios and
  goals are of medians; bench.json keeps every run.
- **Ceilings.** In each repetition, before the systems, a bare franz-go
  producer writes the same N records into fresh destination topics
  (records/s over the whole write), and a bare read_committed consumer
  reads them from freshly preloaded source topics (timed like the
  systems), both with the pipe's tuned settings, on direct connections.
  "× ceiling" is a system's median over the smaller of the two medians:
  no replicator on these clusters can copy faster. "× pipe" is a system's
  median over the faster of the at-least-once pipes that ran (pipe,
  pipe-flush), the reference of the throughput goal.
- **Throughput at saturation.** The source topic is preloaded with N records
  (random, incompressible values; a key; an id header), then the system is
  started. A read_committed consumer on the destination notes when the first
  record becomes visible and when all N are. {window} MB/s counts record values
  (10^6 bytes). Start-up (JVM start, group join, first transaction) is
  reported separately as "startup s" and excluded, so the JVMs are not
  charged for starting; they still run partly cold, as they would after any
  restart.
- **Latency at a fixed rate.** On a fresh topic pair, with the system started
  and a probe record seen through it, a producer offers half the slowest
  system's saturation rate for this workload (the same rate for every
  system), warms up for a few seconds, then measures: latency = time the
  destination read_committed consumer receives the record − the record's
  source timestamp (set by the producer when it hands the record over; same
  clock). Percentiles are nearest-rank over every measured record.
- **CPU and memory.** utime+stime of the replicator processes from
  /proc/<pid>/stat over the saturation window (first to last record
  visible), per GB of record values; peak RSS is the largest VmHWM of one
  replicator process over both phases. Every system runs as a process of its own
  (the pipe is systems/internal/pipe, built by reo-bench), so all are
  measured the same way.
  Broker CPU is both brokers' JVMs over the same window.
- **Correctness.** After each phase the system is stopped and the streaming
  oracle reads the source and destination topics side by side (read_committed):
  every record must be there once, in order, in its partition, byte for byte,
  with headers and timestamp. A run with any violation is marked ❌; its
  speed is not a result.
- **Systems.** reo as built from this tree with its defaults (see
  cmd/reo/README.md) unless the workload says otherwise. pipe: a
  franz-go consume→produce loop without transactions (consumer group, reads
  read_committed, keeps partition, key, value, headers and timestamp,
  commits offsets after the produce is acknowledged): at-least-once, tuned
  as one would tune such a loop by hand (its settings are listed at the
  top when tuned). mm2: MirrorMaker 2 in dedicated mode, identity
  replication policy, checkpoints, heartbeats, offset syncs and group offset
  sync off, one task per partition up to 4 per instance, {mm2heap} with
  Kafka's usual G1 settings. mm2-eos: the same with
  exactly.once.source.support=enabled on the target, internal REST on,
  read_committed source consumer. reo and MirrorMaker 2 run with their
  clients' library defaults (franz-go: snappy, 10 ms linger; Java: no
  compression, 5 ms linger, 16 KiB batches), as a user who does not tune
  them gets.
- **Distance (geo workloads).** Every broker is reached through a
  toxiproxy link; on a geo workload the links of one cluster delay each
  direction by half the round trip (± the jitter) and cap each direction's
  bandwidth per connection. The replicator's clients cross them; the
  harness's producers, watchers and oracle connect directly.
- **Start-up** is from starting the system's processes to the first record
  visible on the destination; the cost curve reports it with reo's commit
  time (its own metrics) and peak RSS at each partition and topic count.
`

// setupText describes the brokers and the network the run used.
func (r *Report) setupText() string {
	var b strings.Builder
	if r.ServerJVM {
		b.WriteString(`- **Brokers.** Each broker runs with the JVM options of Kafka's own start
  scripts (1 GiB heap, G1, full tiered compilation) on the same 2 cores as
  everything else: absolute figures are low and noisy (other work on the
  machine shows in the load average above); the ratios between systems
  measured in one run are the result.
`)
	} else {
		b.WriteString(`- **Brokers.** The local provider runs each broker with test-oriented JVM
  settings (-Xmx512m, SerialGC, C1 only) and, like every cluster here, on
  the same 2 cores as everything else: absolute figures are low and noisy
  (other work on the machine shows in the load average above); the ratios
  between systems measured in one run are the result.
`)
	}
	if r.Failover != nil {
		b.WriteString(`- **Network.** The source's broker is reached through a toxiproxy link
  (the failover blackholes it), in reo-bench's own process; the
  destination's directly, on 127.0.0.1.
`)
		return b.String()
	}
	if r.Unproxied {
		b.WriteString(`- **Network.** Every client, the systems' and the harness's, talks to the
  brokers' own listeners on 127.0.0.1: no proxy in between.
`)
	} else {
		b.WriteString(`- **Network.** The local provider puts a toxiproxy link in front of each
  broker (every broker advertises it, and KRaft brokers cannot add a
  listener at run time), so the systems' traffic crosses it, in reo-bench's
  own process; the harness's own clients bypass it. Its CPU is in
  "harness CPU" in bench.json, the same per byte for every system.
`)
	}
	return b.String()
}

// downstreamText is a line on how fast a bare read_committed consumer
// read each system's output back (medians of the verified runs); empty
// when no run has the figure.
func (r *Report) downstreamText(wl Workload) string {
	return r.perSystemLine(wl, "Each system's output read back after its run by a bare read_committed consumer (the consume ceiling's settings), records/s: ",
		func(x Result) float64 { return x.DownstreamRecordsPerSec })
}

// runCPUText is a line on each system's CPU over its whole run (medians
// of the verified runs); empty when no run has the figure.
func (r *Report) runCPUText(wl Workload) string {
	return r.perSystemLine(wl, "Each system's CPU over its whole saturation run, from its start to its last record visible in the destination, over every record it copied (start-up included, and whatever it read ahead before the measured window opened, which the table's CPU s/GB leaves out), CPU s/GB: ",
		func(x Result) float64 { return x.RunCPUSecondsPerGB })
}

// perSystemLine is lead followed by each system's median (with its
// range) of figure over its verified runs on wl, for the systems whose
// runs have it (figure > 0); empty when none does.
func (r *Report) perSystemLine(wl Workload, lead string, figure func(Result) float64) string {
	var parts []string
	for _, sys := range r.systemsOn(wl.Name) {
		var xs []float64
		for _, x := range r.Results {
			if v := figure(x); x.System == sys && x.Workload.Name == wl.Name && x.Verified && v > 0 {
				xs = append(xs, v)
			}
		}
		if len(xs) > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", sys, SpreadOf(xs).num()))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return lead + strings.Join(parts, "; ") + ".\n\n"
}

// WindowRate is a saturation rate over the window that opens at the
// first sighting of the share From of the records.
type WindowRate struct {
	From          float64 `json:"from"`
	RecordsPerSec float64 `json:"records_per_sec"`
}

// windowRatesText is a workload's saturation rates by where the window
// opens, medians over the runs; empty when no run has them.
func (r *Report) windowRatesText(wl Workload) string {
	var froms []float64
	rates := map[string]map[float64][]float64{}
	for _, x := range r.Results {
		if x.Workload.Name != wl.Name || !x.Verified {
			continue
		}
		for _, w := range x.WindowRates {
			if !slices.Contains(froms, w.From) {
				froms = append(froms, w.From)
			}
			if rates[x.System] == nil {
				rates[x.System] = map[float64][]float64{}
			}
			rates[x.System][w.From] = append(rates[x.System][w.From], w.RecordsPerSec)
		}
	}
	if len(froms) == 0 {
		return ""
	}
	slices.Sort(froms)
	var b strings.Builder
	fmt.Fprintf(&b, "Saturation records/s by where the measured window opens (the first sighting of this share of the records; medians of the verified runs; the table above opens at %.0f%%). A system whose figure falls as the window opens later was faster early in its run than later:\n\n| system |", r.WindowFrom*100)
	for _, f := range froms {
		fmt.Fprintf(&b, " %.0f%% |", f*100)
	}
	b.WriteString(" last ÷ first |\n|---|" + strings.Repeat("---:|", len(froms)+1) + "\n")
	for _, sys := range r.systemsOn(wl.Name) {
		if rates[sys] == nil {
			continue
		}
		fmt.Fprintf(&b, "| %s |", sys)
		for _, f := range froms {
			if xs := rates[sys][f]; len(xs) > 0 {
				fmt.Fprintf(&b, " %s |", fmtNum(SpreadOf(xs).Median))
			} else {
				b.WriteString(" – |")
			}
		}
		first, last := rates[sys][froms[0]], rates[sys][froms[len(froms)-1]]
		if len(first) > 0 && len(last) > 0 {
			fmt.Fprintf(&b, " %.2f |\n", SpreadOf(last).Median/SpreadOf(first).Median)
		} else {
			b.WriteString(" – |\n")
		}
	}
	b.WriteString("\n")
	return b.String()
}

// SettledSamples is how many samples in a row of the destination's
// summed last stable offsets must agree, at or above a run's records,
// before the harness starts counting the records (the bench package's
// countSettled; windowText says so).
const SettledSamples = 5

// StableEvery is how often a saturation run samples the destination's
// last stable offsets up to 1,000 partitions; StableInterval gives the
// interval at any partition count, and windowText and the run's notes
// say it.
const StableEvery = 50 * time.Millisecond

// StableInterval is how often a saturation run over partitions samples
// the destination's last stable offsets: every StableEvery below 1,000
// partitions, StableEvery per 500 partitions from there (a ListOffsets
// over 5,000 partitions every 500 ms), at most 1 s, so the sampling stays
// a small load on the broker.
func StableInterval(partitions int) time.Duration {
	return min(time.Second, StableEvery*time.Duration(max(1, partitions/500)))
}

// mm2Heap is MirrorMaker 2's heap options in the run.
func (r *Report) mm2Heap() string {
	if r.MM2Heap == "" {
		return "-Xms256m -Xmx512m"
	}
	return r.MM2Heap
}

// windowText says what a saturation run's rate is taken over.
func (r *Report) windowText() string {
	w := "records/s = (N − records visible at the first sighting) / (last − first sighting)."
	if r.WindowFrom > 0 {
		w = fmt.Sprintf("records/s = (N − M) / (last sighting − sighting of M), where M is the count at the first sighting of at least %.0f%% of N (--window-from): the start of the run, before the loops and the brokers are in their stride, is left out. The ceilings are timed over the same share (the producer from its acknowledgements); CPU s/GB is over the same window.", r.WindowFrom*100)
		if slices.ContainsFunc(r.Results, func(x Result) bool { return x.RunCPUSecondsPerGB > 0 }) {
			w += " A system that reads the source ahead of what it writes does some of its work before the window opens, so each workload also gives every system's CPU over its whole run (run_cpu_seconds_per_gb in bench.json, start-up included; reports/bench-geo/cpu-window)."
		}
	}
	if r.StableTiming {
		w += " The sightings are not the consumer's: every " + fmt.Sprint(StableEvery.Milliseconds()) + " ms (less often from 1,000 partitions: " + fmt.Sprint(StableEvery.Milliseconds()) + " ms per 500, at most 1 s) the harness sums the destination partitions' last stable offsets (ListOffsets, read_committed), which say what a read_committed reader may read without reading it, so a consumer that falls behind does not delay them (the harness's fell a second behind reo's transactional output, reports/bench-window). The sums count transaction markers too, so they are scaled by N over the final sum, and the run ends at the first sample of that final sum."
		if !r.CountAfter {
			w += " The consumer's own rate is kept in bench.json (watcher_records_per_sec)."
		}
		w += " Startup s is to the first sample above zero."
	}
	if r.CountAfter {
		w += fmt.Sprintf(" The harness consumer that counts the records (the run ends when it has seen them all) starts only once those sums have stopped at or above N for %d samples (%d ms at the usual interval), after", SettledSamples, (SettledSamples-1)*StableEvery.Milliseconds()) + " the measured window: it does not share the machine with the system while the system is timed (before 2026-12-04 it read the records as they came, and cost 0.7–2.3 CPU s per GB copied on 1 KiB records and 5.4–7.4 on 100 B, more for some systems' output than for others', reports/bench-count). So bench.json has no consumer rate of its own (watcher_records_per_sec), and the harness's CPU s/GB is the sampling's."
	}
	return w
}

// repeatLabel names x's repetition in notes, when it has one.
func repeatLabel(x Result) string {
	if x.Repeat == 0 {
		return ""
	}
	return fmt.Sprintf(" (run %d)", x.Repeat)
}

// workloadTable is a workload's table: one row per system (medians and
// ranges over its runs) and the ceilings.
func (r *Report) workloadTable(wl Workload) string {
	var b strings.Builder
	b.WriteString("| system | records/s | MB/s | × pipe | × mm2-eos | × ceiling | startup s | offered rec/s | p50 ms | p99 ms | p99.9 ms | CPU s/GB | broker CPU s/GB | peak RSS MiB | verified |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|\n")
	for _, sys := range r.systemsOn(wl.Name) {
		s, _ := r.Summarize(sys, wl.Name)
		if s.Runs == 0 {
			fmt.Fprintf(&b, "| %s | skipped: %s | | | | | | | | | | | | | |\n", sys, strings.ReplaceAll(s.Skipped, "|", "/"))
			continue
		}
		rp, okp := 0.0, false
		if pipe, ok := r.FasterPipe(wl); ok {
			rp, okp = r.RatioOf(sys, wl, pipe)
		}
		re, oke := r.RatioOf(sys, wl, SysMM2EOS)
		rc, okc := r.OfCeiling(sys, wl)
		verified := "✅"
		if !s.AllVerified() {
			verified = strings.TrimSpace("❌ " + r.violationSummary(sys, wl.Name))
		}
		if s.Runs > 1 {
			verified += fmt.Sprintf(" %d/%d", s.Verified, s.Runs)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			sys, s.RecordsPerSec.num(), s.MBPerSec.num(), fmtRatio(rp, okp), fmtRatio(re, oke), fmtRatio(rc, okc),
			s.StartupSec.num(), s.OfferedRate.num(), s.P50Ms.num(), s.P99Ms.num(), s.P999Ms.num(),
			s.CPUSecondsPerGB.num(), s.BrokerCPUSecondsPerGB.num(), s.PeakRSSMB.num(), verified)
	}
	if c, ok := r.CeilingOf(wl); ok && !wl.ReoOnly() {
		fmt.Fprintf(&b, "| *ceiling: bare producer into the destination* | %s | %s | | | | | | | | | | | | |\n", c.Produce.num(), c.ProduceMB.num())
		fmt.Fprintf(&b, "| *ceiling: bare consumer from the source* | %s | %s | | | | | | | | | | | | |\n", c.Consume.num(), c.ConsumeMB.num())
	}
	return b.String()
}

// targetsText is bench.md's summary of the goals for reo over every
// workload; empty when reo has none.
func (r *Report) targetsText() string {
	ts := r.AllTargets()
	if len(ts) == 0 {
		return ""
	}
	var b strings.Builder
	met := 0
	for _, t := range ts {
		if t.Met {
			met++
		}
	}
	fmt.Fprintf(&b, "## Goals for reo\n\n%d of %d met, each judged on the medians of this run; workloads that vary a reo setting are experiments and have none.\n\n", met, len(ts))
	b.WriteString("| workload | goal | want | got | met | margin |\n|---|---|---|---|:---:|---|\n")
	for _, t := range ts {
		mark := "✅"
		if !t.Met {
			mark = "❌"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", t.Workload, t.Name, t.Want, t.Got, mark, t.Margin)
	}
	b.WriteString("\n")
	return b.String()
}

// costCurveText is the cost curve: per system, how throughput, start-up,
// commit time and memory grow with partitions and topics; then the
// restarts, when measured.
func (r *Report) costCurveText() string {
	var b strings.Builder
	b.WriteString("## Cost curve\n\nHow each system's cost grows with the partitions it copies: throughput at saturation, start-up (process start to the first record visible on the destination), reo's commit time (its own metrics: average and p99 bucket), peak RSS. Medians over the runs.\n\n")
	b.WriteString("| workload | partitions | system | records/s | startup s | commit ms avg | commit ms p99 | peak RSS MiB | CPU s/GB | verified |\n|---|---:|---|---:|---:|---:|---:|---:|---:|:---:|\n")
	for _, wl := range r.workloads() {
		for _, sys := range r.systemsOn(wl.Name) {
			s, _ := r.Summarize(sys, wl.Name)
			if s.Runs == 0 {
				fmt.Fprintf(&b, "| %s | %d | %s | skipped: %s | | | | | | |\n", wl.Name, wl.Partitions*wl.TopicCount(), sys, strings.ReplaceAll(s.Skipped, "|", "/"))
				continue
			}
			v := "✅"
			if !s.AllVerified() {
				v = "❌"
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", wl.Name, wl.Partitions*wl.TopicCount(), sys,
				s.RecordsPerSec.num(), s.StartupSec.num(), s.CommitMsAvg.num(), s.CommitP99Ms.num(), s.PeakRSSMB.num(), s.CPUSecondsPerGB.num(), v)
		}
	}
	b.WriteString("\n")
	if r.hasRestarts() {
		b.WriteString("### Restarts and crashes\n\n" + restartLead + "\n\n")
		b.WriteString(r.restartTable(r.workloads()...))
	}
	return b.String()
}

// restartLead says what the restart table's figures are.
const restartLead = "After its saturation run and its oracle check, each system was stopped (SIGTERM) and one more record was written to every source partition; then it was started again under the same name (**restart**). With --crash, a backlog of a fifth of the run's records (at least two a partition) was then written, the system started while 5,000 records/s more were written, and it was killed (SIGKILL) as soon as any of them was visible, with the rest in flight; 50 more were written while it was down, and it was started again once nothing new had become visible for a second (**crash**). \"First\" is from the new process's start to the first of those records visible to a read_committed consumer of the destination that was not visible before (before the kill, for a crash), \"all\" to the last of them; \"copied again\" counts the records that consumer saw beyond one copy of each, up to then. The oracle checked the whole topics after each, its verdict kept apart from the run's; a restart is not tried after a run that did not verify, nor a crash after a restart that did not. Only reo and mm2-eos promise exactly-once: a record that mm2 or a pipe copies twice is the cost of at-least-once they state. Medians with the range in brackets."

// hasRestarts reports whether any run has a restart.
func (r *Report) hasRestarts() bool {
	for _, x := range r.Results {
		if x.Restart != nil {
			return true
		}
	}
	return false
}

// restartTable is the restarts and crashes of each system on each of
// wls that has some.
func (r *Report) restartTable(wls ...Workload) string {
	var b strings.Builder
	b.WriteString("| workload | system | restart s: first | restart s: all | copied again | verified after the restart | crash: visible when killed, of written | crash s: first | crash s: all | copied again | verified after the crash |\n|---|---|---:|---:|---:|:---:|---:|---:|---:|---:|:---:|\n")
	for _, wl := range wls {
		for _, sys := range r.systemsOn(wl.Name) {
			s, _ := r.Summarize(sys, wl.Name)
			if s.Restart.Runs == 0 {
				continue
			}
			rs, cr := s.Restart, s.Crash
			killed := "–"
			if cr.KilledAt.N > 0 {
				killed = fmt.Sprintf("%s of %s", cr.KilledAt.count(), cr.Records.count())
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", wl.Name, sys,
				rs.FirstSec.num(), rs.AllSec.num(), rs.Again.count(), rs.verdict(), killed, cr.FirstSec.num(), cr.AllSec.num(), cr.Again.count(), cr.verdict())
		}
	}
	b.WriteString("\n")
	return b.String()
}

// verdict is the restarts' verdict for a table: ✅ when every one was
// verified, ❌ with counts otherwise, – when none ran.
func (s RestartSummary) verdict() string {
	switch {
	case s.Runs == 0:
		return "–"
	case s.AllVerified():
		v := "✅"
		if s.StopKilled > 0 {
			v += fmt.Sprintf(" (%d after a stop that had to kill)", s.StopKilled)
		}
		return v
	}
	var parts []string
	if n := s.Runs - s.Verified - s.Failed; n > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d did not match the source", n, s.Runs))
	}
	if s.Failed > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d not measured to the end", s.Failed, s.Runs))
	}
	if s.StopKilled > 0 {
		parts = append(parts, fmt.Sprintf("%d after a stop that had to kill", s.StopKilled))
	}
	return "❌ " + strings.Join(parts, ", ")
}

// restartText is a workload's restarts and crashes; empty when none ran.
// The cost curve has them in its own section instead.
func (r *Report) restartText(wl Workload) string {
	if r.CostCurve {
		return ""
	}
	for _, x := range r.Results {
		if x.Workload.Name == wl.Name && x.Restart != nil {
			return restartLead + "\n\n" + r.restartTable(wl)
		}
	}
	return ""
}

// Restart is a system started again over the topics it had copied.
//
// For a restart, it was stopped cleanly (SIGTERM, then --stop-grace) and
// one more record was written meanwhile to every source partition. For a
// crash, a backlog was written, the system started, and it was killed
// (SIGKILL) as soon as any of the backlog was visible; then it started
// again.
type Restart struct {
	// Records is how many were written for it: one per source partition
	// for a restart, the backlog for a crash.
	Records int64 `json:"records"`
	// StopKilled: the stop before a restart had to SIGKILL a process
	// after --stop-grace, so the restart followed an unclean stop.
	StopKilled bool `json:"stop_killed,omitempty"`
	// KilledAt is how many of a crash's records were visible when the
	// system was killed.
	KilledAt int64 `json:"killed_at,omitempty"`
	// Seen is how many records a read_committed consumer had seen in the
	// destination, past where the committed records ended before they
	// were written, when it had seen every one of them: Records, plus
	// every record copied twice (the oracle says which).
	Seen int64 `json:"seen"`
	// FirstSec is from the new process's start to the first of the
	// records visible that was not visible before (for a crash: before
	// the kill); AllSec to when every one of them was. 0 when not seen.
	FirstSec float64 `json:"first_sec,omitempty"`
	AllSec   float64 `json:"all_sec,omitempty"`
	// Verified is the oracle's verdict over the whole topics afterwards:
	// nothing lost, duplicated or reordered. It is kept apart from the
	// run's own verdict, which came before.
	Verified bool `json:"verified"`
	// Checked is how many records the oracle compared then.
	Checked int64 `json:"checked,omitempty"`
	// Violations counts the oracle's findings then, by kind.
	Violations map[string]int `json:"violations,omitempty"`
	// Error says why it was not measured to its end.
	Error string `json:"error,omitempty"`
}

// Again is how many records were copied more than once: seen beyond
// the records written for the restart.
func (rs *Restart) Again() int64 { return max(0, rs.Seen-rs.Records) }

// SaturationGC is, by cluster ("source", "destination"), how many GC
// pauses started in a saturation run's measured window and how long they
// took together; WindowMs is the window's length, so a run that lost a
// share of its window to a stopped broker says how much.
type SaturationGC struct {
	Pauses       map[string]int     `json:"pauses"`
	PauseMsTotal map[string]float64 `json:"pause_ms_total"`
	WindowMs     float64            `json:"window_ms"`
}

// LatencyGC relates a latency run's records to the brokers' GC pauses.
type LatencyGC struct {
	// Pauses and PauseMsAvg are by cluster ("source", "destination"):
	// the pauses that started in the measured window and their mean.
	Pauses     map[string]int     `json:"pauses"`
	PauseMsAvg map[string]float64 `json:"pause_ms_avg"`
	// SlowestShare is the share (0-1) of the window's slowest 1 % of
	// records whose life (source timestamp to sighting in the
	// destination) overlapped a pause of either cluster; AllShare is the
	// share of all its records.
	SlowestShare float64 `json:"slowest_share"`
	AllShare     float64 `json:"all_share"`
}

// sharesText says, for the saturation phase of a run of several reo
// instances, when every instance owned a share of the shards against when
// the measured window opened; "" otherwise.
func sharesText(x Result, phase string) string {
	if phase != "saturation" || x.SharesSettledSec <= 0 {
		return ""
	}
	when := "after"
	if x.SharesSettledSec <= x.WindowOpenSec {
		when = "before"
	}
	return fmt.Sprintf("; every instance owned a share of the shards %.2f s after the start, %s the measured window opened (%.2f s); before that some instances had no shard", x.SharesSettledSec, when, x.WindowOpenSec)
}
