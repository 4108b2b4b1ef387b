// The kernel side of `observe --pid`: eBPF programs on the syscall, scheduler and TCP
// tracepoints that write records for the traced processes only (their thread group ids in
// `tgids`, with every process they fork), into one ring buffer read by `attach.rs`. Compiled
// by build.rs (clang -target bpf); field offsets inside kernel structures are relocated by
// libbpf against the running kernel's BTF when loaded.
//
// The cost to the traced client is mostly records written, so a syscall is held at its entry
// (in `threads`, the thread's own storage) and written as one CALL record at its return. It
// is written at once as ENTER when anything else may need it in the stream first: its thread
// is switched out (to sleep, or preempted: it may be long before it returns), or another
// traced thread wakes it (the reader accounts a wake-up by the wakee's call in flight). The
// reader sorts records by time, so a record written late is in its place if it comes within
// the reader's margin, which these rules keep it inside.
//
// Record layout (native endian), shared with ring.rs: a 24-byte header { u32 kind; u32 pid;
// u32 tid; u32 len (unused, 0); u64 time } then, by kind:
//   CALL   { s64 nr; u64 args[6]; u64 enter; s64 ret }   a syscall whole, at its return
//   ENTER  { s64 nr; u64 args[6] }                        a syscall entered (time = entry)
//   EXIT   { s64 nr; s64 ret; u64 slept }                 the return of one written as ENTER
//   WAKING { u32 wakee; u32 pad }                         it woke a thread
//   TCP    { u16 family, sport, dport, pad; u8 saddr[16]; u8 daddr[16] }
//          a TCP socket it received on, when it is not the one it last received on

#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>

struct pt_regs {
	unsigned long di, si, dx, r10, r8, r9, orig_ax;
} __attribute__((preserve_access_index));

struct task_struct {
	int pid;
	int tgid;
} __attribute__((preserve_access_index));

struct in6_addr {
	union {
		__u8 u6_addr8[16];
	} in6_u;
} __attribute__((preserve_access_index));

// The kernel's are unions of these and anonymous structs: libbpf finds the fields by name.
struct sock_common {
	__be32 skc_daddr;
	__be32 skc_rcv_saddr;
	__be16 skc_dport;
	__u16 skc_num;
	unsigned short skc_family;
	struct in6_addr skc_v6_daddr;
	struct in6_addr skc_v6_rcv_saddr;
} __attribute__((preserve_access_index));

struct sock {
	struct sock_common __sk_common;
} __attribute__((preserve_access_index));

enum { ENTER = 1, EXIT = 2, WAKING = 4, TCP = 5, CALL = 6 };
enum { AF_INET = 2, AF_INET6 = 10 };

// The traced processes (thread group ids).
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} tgids SEC(".maps");

// A filter in front of `tgids`, asked by every syscall on the host: slot `tgid % SLOTS` holds
// the one traced process that fell in it, MANY when several did (then `tgids` decides), 0 for
// none. An array lookup is inlined by the verifier; a hash lookup costs a hash.
#define SLOTS 4096
#define MANY 0xffffffff
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} slots SEC(".maps");

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

// Set before loading by `cost pid` to measure what the syscall tracepoints cost by being
// attached at all: the programs on them return at once (the verifier drops the rest).
const volatile __u32 hooks_alone = 0;

struct header {
	__u32 kind, pid, tid, len;
	__u64 time;
};

// Per thread: its syscall in flight, and the socket it last received on.
enum { NONE, HELD, WRITTEN };
struct thread {
	__s64 nr;
	__u64 args[6];
	__u64 enter;
	__u32 state;
	// It slept in the call (switched out in S or D, not preempted).
	__u32 slept;
	// The TCP socket last received on: the kernel's pointer and its ports.
	__u64 sock;
	__u32 ports;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread);
} threads SEC(".maps");

static __always_inline int traced(__u32 tgid)
{
	__u32 k = tgid % SLOTS;
	__u32 *slot = bpf_map_lookup_elem(&slots, &k);
	if (!slot || *slot == 0)
		return 0;
	if (*slot == tgid)
		return 1;
	return *slot == MANY && bpf_map_lookup_elem(&tgids, &tgid) != 0;
}

// Also written by attach.rs, the same way.
static __always_inline void trace(__u32 tgid)
{
	__u8 one = 1;
	bpf_map_update_elem(&tgids, &tgid, &one, BPF_ANY);
	__u32 k = tgid % SLOTS;
	__u32 *slot = bpf_map_lookup_elem(&slots, &k);
	if (!slot)
		return;
	__u32 was = __sync_val_compare_and_swap(slot, 0, tgid);
	if (was != 0 && was != tgid)
		*slot = MANY;
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

static __always_inline struct header head(__u32 kind, __u32 tgid, __u32 tid, __u64 time)
{
	struct header h = { .kind = kind, .pid = tgid, .tid = tid, .time = time };
	return h;
}

// The held syscall of thread `tid` (of process `tgid`) written as ENTER, at its entry's time.
static __always_inline void write_entry(struct thread *t, __u32 tgid, __u32 tid)
{
	if (t->state != HELD)
		return;
	struct {
		struct header h;
		__s64 nr;
		__u64 args[6];
	} r = { .h = head(ENTER, tgid, tid, t->enter), .nr = t->nr };
	__builtin_memcpy(r.args, t->args, sizeof r.args);
	put(&r, sizeof r);
	t->state = WRITTEN;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(sys_enter, struct pt_regs *regs, long nr)
{
	if (hooks_alone)
		return 0;
	// The syscall first: an array lookup, cheaper than the hash of processes.
	if (!read_syscall(nr))
		return 0;
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	if (!traced(pid_tgid >> 32))
		return 0;
	struct thread *t = bpf_task_storage_get(&threads, bpf_get_current_task_btf(), 0,
						BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t)
		return 0;
	t->nr = nr;
	// Loads from the typed pointer (relocated against the kernel's BTF), not helper calls.
	t->args[0] = regs->di;
	t->args[1] = regs->si;
	t->args[2] = regs->dx;
	t->args[3] = regs->r10;
	t->args[4] = regs->r8;
	t->args[5] = regs->r9;
	t->enter = bpf_ktime_get_ns();
	t->state = HELD;
	t->slept = 0;
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sys_exit, struct pt_regs *regs, long ret)
{
	if (hooks_alone)
		return 0;
	long nr = regs->orig_ax;
	if (!read_syscall(nr))
		return 0;
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	if (!traced(pid_tgid >> 32))
		return 0;
	__u64 now = bpf_ktime_get_ns();
	struct thread *t = bpf_task_storage_get(&threads, bpf_get_current_task_btf(), 0, 0);
	if (t && t->state == HELD && t->nr == nr) {
		struct {
			struct header h;
			__s64 nr;
			__u64 args[6];
			__u64 enter;
			__s64 ret;
		} r = { .h = head(CALL, pid_tgid >> 32, (__u32)pid_tgid, now), .nr = nr,
			.enter = t->enter, .ret = ret };
		__builtin_memcpy(r.args, t->args, sizeof r.args);
		put(&r, sizeof r);
	} else {
		// Its entry written before, or not seen (tracing began inside it).
		struct {
			struct header h;
			__s64 nr;
			__s64 ret;
			__u64 slept;
		} r = { .h = head(EXIT, pid_tgid >> 32, (__u32)pid_tgid, now), .nr = nr,
			.ret = ret, .slept = t && t->state == WRITTEN && t->slept };
		put(&r, sizeof r);
	}
	if (t)
		t->state = NONE;
	return 0;
}

// A traced thread switched out inside a syscall: the call written (it may be long before it
// returns), and marked if the thread went to sleep (S or D) rather than being preempted (a
// preempted task may show a sleeping state it had only begun to enter).
SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch, _Bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u32 tgid = prev->tgid;
	if (!traced(tgid))
		return 0;
	struct thread *t = bpf_task_storage_get(&threads, prev, 0, 0);
	if (!t || t->state == NONE)
		return 0;
	write_entry(t, tgid, prev->pid);
	if (!preempt && (prev_state & 3))
		t->slept = 1;
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
	struct thread *t = bpf_task_storage_get(&threads, p, 0, 0);
	if (t)
		write_entry(t, p->tgid, p->pid);
	struct {
		struct header h;
		__u32 wakee, pad;
	} r = { .h = head(WAKING, pid_tgid >> 32, (__u32)pid_tgid, bpf_ktime_get_ns()),
		.wakee = p->pid };
	put(&r, sizeof r);
	return 0;
}

// Every TCP receive passes through it: the socket's addresses, written when the thread
// receives on a socket other than the one it last did.
SEC("tp_btf/tcp_rcv_space_adjust")
int BPF_PROG(tcp_rcv_space_adjust, struct sock *sk)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	if (!traced(pid_tgid >> 32))
		return 0;
	struct sock_common *c = &sk->__sk_common;
	__u16 family = c->skc_family;
	if (family != AF_INET && family != AF_INET6)
		return 0;
	__u16 sport = c->skc_num, dport = bpf_ntohs(c->skc_dport);
	__u32 ports = ((__u32)sport << 16) | dport;
	struct thread *t = bpf_task_storage_get(&threads, bpf_get_current_task_btf(), 0,
						BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (t && t->sock == (__u64)sk && t->ports == ports)
		return 0;
	struct {
		struct header h;
		__u16 family, sport, dport, pad;
		__u8 saddr[16], daddr[16];
	} r = { .h = head(TCP, pid_tgid >> 32, (__u32)pid_tgid, bpf_ktime_get_ns()),
		.family = family, .sport = sport, .dport = dport };
	if (family == AF_INET6) {
		__builtin_memcpy(r.saddr, c->skc_v6_rcv_saddr.in6_u.u6_addr8, 16);
		__builtin_memcpy(r.daddr, c->skc_v6_daddr.in6_u.u6_addr8, 16);
	} else {
		__be32 s4 = c->skc_rcv_saddr, d4 = c->skc_daddr;
		__builtin_memcpy(r.saddr, &s4, 4);
		__builtin_memcpy(r.daddr, &d4, 4);
	}
	put(&r, sizeof r);
	if (t) {
		t->sock = (__u64)sk;
		t->ports = ports;
	}
	return 0;
}

// A traced process's children are traced, and so are those of the thread starting a command.
SEC("tp_btf/sched_process_fork")
int BPF_PROG(sched_process_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	__u32 zero = 0;
	__u32 *starter = bpf_map_lookup_elem(&spawner, &zero);
	if (ptgid == ctgid)
		return 0;
	if (traced(ptgid) || (starter && *starter && *starter == (__u32)parent->pid))
		trace(ctgid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
