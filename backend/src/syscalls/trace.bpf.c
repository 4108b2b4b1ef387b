// The kernel side of `observe --pid`: eBPF programs on the syscall and scheduler tracepoints
// that write a record for the traced processes only (their thread group ids in `tgids`, with
// every process they fork), into one ring buffer read by `attach.rs`. Compiled by build.rs
// (clang -target bpf); field offsets inside kernel structures are relocated by libbpf against
// the running kernel's BTF when loaded.
//
// Record layout (native endian), shared with ring.rs: a 24-byte header { u32 kind; u32 pid;
// u32 tid; u32 len; u64 time } then, by kind:
//   ENTER  { s64 nr; u64 args[6] }     SWITCH (the thread went to sleep)  { }
//   EXIT   { s64 nr; s64 ret }         WAKING (it woke a thread)          { u32 wakee; u32 pad }
//   TCP    { u8 raw[len] }: tcp_rcv_space_adjust's own record, decoded with tracefs's format
//          (its first 8 bytes, the common fields, are overwritten by the kernel for eBPF).

#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

struct pt_regs {
	unsigned long di, si, dx, r10, r8, r9, orig_ax;
} __attribute__((preserve_access_index));

struct task_struct {
	int pid;
	int tgid;
} __attribute__((preserve_access_index));

enum { ENTER = 1, EXIT = 2, SWITCH = 3, WAKING = 4, TCP = 5 };
#define RAW_LEN 96

// The traced processes (thread group ids).
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} tgids SEC(".maps");

// The syscalls read (by number): the others are not written.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} syscalls SEC(".maps");

// The thread that starts a command to trace: the processes it forks are traced.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} spawner SEC(".maps");

// Records not written because the ring buffer was full, per CPU.
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} records SEC(".maps");

// Per CPU, how deep it is in interrupts that can wake a thread (device IRQ handlers, softirqs,
// hrtimer callbacks): the tracepoints that bracket them keep it. (This kernel's BTF does not
// give eBPF the preempt count.)
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} in_interrupt SEC(".maps");

struct header {
	__u32 kind, pid, tid, len;
	__u64 time;
};

static __always_inline int traced(__u32 tgid)
{
	return bpf_map_lookup_elem(&tgids, &tgid) != 0;
}

static __always_inline int read_syscall(long nr)
{
	__u32 k = nr;
	__u8 *on = bpf_map_lookup_elem(&syscalls, &k);
	return on && *on;
}

// Written without waking the reader: it reads every few milliseconds.
static __always_inline void put(void *rec, __u64 size)
{
	if (bpf_ringbuf_output(&records, rec, size, BPF_RB_NO_WAKEUP) != 0) {
		__u32 zero = 0;
		__u64 *n = bpf_map_lookup_elem(&lost, &zero);
		if (n)
			*n += 1;
	}
}

static __always_inline struct header head(__u32 kind, __u64 pid_tgid)
{
	struct header h = {
		.kind = kind,
		.pid = pid_tgid >> 32,
		.tid = (__u32)pid_tgid,
		.time = bpf_ktime_get_ns(),
	};
	return h;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(sys_enter, struct pt_regs *regs, long nr)
{
	// The syscall first: an array lookup, cheaper than the hash of processes.
	if (!read_syscall(nr))
		return 0;
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	if (!traced(pid_tgid >> 32))
		return 0;
	struct {
		struct header h;
		__s64 nr;
		__u64 args[6];
	} r = { .h = head(ENTER, pid_tgid), .nr = nr };
	// Loads from the typed pointer (relocated against the kernel's BTF), not helper calls.
	r.args[0] = regs->di;
	r.args[1] = regs->si;
	r.args[2] = regs->dx;
	r.args[3] = regs->r10;
	r.args[4] = regs->r8;
	r.args[5] = regs->r9;
	put(&r, sizeof r);
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sys_exit, struct pt_regs *regs, long ret)
{
	long nr = regs->orig_ax;
	if (!read_syscall(nr))
		return 0;
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	if (!traced(pid_tgid >> 32))
		return 0;
	struct {
		struct header h;
		__s64 nr;
		__s64 ret;
	} r = { .h = head(EXIT, pid_tgid), .nr = nr, .ret = ret };
	put(&r, sizeof r);
	return 0;
}

// Switches away to sleep (S or D), not preemptions (a preempted task may show a sleeping
// state it had only begun to enter).
SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch, _Bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	if (preempt || !(prev_state & 3))
		return 0;
	__u32 tgid = prev->tgid;
	if (!traced(tgid))
		return 0;
	struct header h = head(SWITCH, ((__u64)tgid << 32) | (__u32)prev->pid);
	put(&h, sizeof h);
	return 0;
}

static __always_inline void interrupt(int by)
{
	__u32 zero = 0;
	__u32 *depth = bpf_map_lookup_elem(&in_interrupt, &zero);
	// An exit seen without its entry (tracing began inside it) leaves it at 0.
	if (depth && (by > 0 || *depth > 0))
		*depth += by;
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(irq_entry) { interrupt(1); return 0; }
SEC("tp_btf/irq_handler_exit")
int BPF_PROG(irq_exit) { interrupt(-1); return 0; }
SEC("tp_btf/softirq_entry")
int BPF_PROG(softirq_entry) { interrupt(1); return 0; }
SEC("tp_btf/softirq_exit")
int BPF_PROG(softirq_exit) { interrupt(-1); return 0; }
SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(hrtimer_entry) { interrupt(1); return 0; }
SEC("tp_btf/hrtimer_expire_exit")
int BPF_PROG(hrtimer_exit) { interrupt(-1); return 0; }

// Wake-ups by the thread, not from an interrupt on its CPU (a packet delivered by the
// network's softirq, a timer expiring).
SEC("tp_btf/sched_waking")
int BPF_PROG(sched_waking, struct task_struct *p)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	if (!traced(pid_tgid >> 32))
		return 0;
	__u32 zero = 0;
	__u32 *depth = bpf_map_lookup_elem(&in_interrupt, &zero);
	if (depth && *depth > 0)
		return 0;
	struct {
		struct header h;
		__u32 wakee, pad;
	} r = { .h = head(WAKING, pid_tgid), .wakee = p->pid };
	put(&r, sizeof r);
	return 0;
}

// Every TCP receive passes through it, with the socket's addresses: its record copied whole.
SEC("tracepoint/tcp/tcp_rcv_space_adjust")
int tcp_rcv_space_adjust(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	if (!traced(pid_tgid >> 32))
		return 0;
	struct {
		struct header h;
		__u8 raw[RAW_LEN];
	} r = { .h = head(TCP, pid_tgid) };
	r.h.len = RAW_LEN;
	bpf_probe_read_kernel(r.raw, RAW_LEN, ctx);
	put(&r, sizeof r);
	return 0;
}

// A traced process's children are traced, and so are those of the thread starting a command.
SEC("tp_btf/sched_process_fork")
int BPF_PROG(sched_process_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	__u32 zero = 0;
	__u32 *starter = bpf_map_lookup_elem(&spawner, &zero);
	__u8 one = 1;
	if (ptgid == ctgid)
		return 0;
	if (traced(ptgid) || (starter && *starter && *starter == (__u32)parent->pid))
		bpf_map_update_elem(&tgids, &ctgid, &one, BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
