// The halo and the time step's minimum from GPU to GPU by the kernels' own stores over
// NVLink (src/solver/cuda/ipc.rs): every rank exports a mailbox (CUDA IPC) that the others
// map; a sender stores its send cells straight into the receiver's mailbox and then a flag,
// the receiver waits for the flag and copies the cells into its receive block. The time
// step's minimum and the health flag go in two words that carry their own sequence number
// (no flag), from the last block of the time-step kernel. Each cross-GPU wait is one NVLink
// store and a poll of local memory, where NCCL's send/receive and all-reduce are kernels of
// their own with their own handshakes.
//
// Ghost updates (PYCNO_IPC_GHOSTS, first order): instead of the halo of the updated state, each
// sender stores, in its time-step kernel, what its update of each send cell reads (the state,
// the low parts, the three slots' words, the Coriolis parameter), and each receiver updates
// its receive block itself from these words, in its own update kernel, with the same
// function (update_state): the same bits as the owner's. The words travel before the time
// step's minimum, whose words then cover them: one cross-GPU wait a step instead of two, no
// receipt kernel and no second stream, and the step is one GPU's three kernels.
//
// Mailbox layout (words of 8 bytes; PEER_MAX_RANKS ranks at most):
//   [0, M)        halo flag per source rank: the sequence number of its last halo here
//   [M, 5M)       reduce slot per source rank: two pairs of tagged words (peer_reduce_send);
//                 the own rank's slot counts its minima
//   [5M, ...)     the receive block's cells, layer 1 then layer 2 (n_recv cells each),
//                 from byte PEER_HEADER_BYTES, twice: exchange seq goes to copy seq mod 2
//                 (region[rank] bytes further for odd seq)
//   then          the ghost words (ghost updates, below): PEER_GHOST_WORDS words per receive
//                 cell, twice, word j of cell r at (j n_recv + r) of copy seq mod 2; a sender
//                 stores those of exchange seq only after every rank's minimum of seq - 1,
//                 which each receiver raises after its update of seq - 2 read that copy
// Sequence numbers count exchanges from 1 (Control::seq is the count before the batch); a
// slot is rewritten only after its reader has used it (each rank's step waits for every
// other rank's minimum of the step before), so one slot per source suffices. The cells take
// two copies, exchange seq in copy seq mod 2: at second order a step makes two exchanges and
// one minimum, and with one copy the first stage's halo of step k + 1 could overwrite the
// second stage's of step k before its receiver copied it out. Exchange seq + 2 reuses a copy
// only after a minimum that every rank takes after its receipt of exchange seq.

#define PEER_MAX_RANKS 64
#define PEER_HEADER_BYTES (5 * PEER_MAX_RANKS * 8)
// A rank that waits this long for another (ns) gives up: stop = 4, reported by the host.
#define PEER_TIMEOUT_NS 120000000000ull

// Which peers and where (PeerArgs in src/solver/cuda/ipc.rs, passed by value).
struct PeerArgs {
    const unsigned long long* mailboxes;  // every rank's mailbox as mapped here (own: local)
    const int* send_cells;                // per sent cell: local cell, destination rank,
    const int* send_dest;                 //   byte offsets of its two layers in that
    const long long* send_off;            //   destination's mailbox (2 per cell)
    const int* dests;                     // the destination ranks and the source ranks
    const int* sources;
    unsigned long long* counter;          // blocks of the send kernel (or update_peer) done
    const int* by_cell_first;             // per send-block cell c: its sent cells' entries
    const int* by_cell_items;             //   by_cell_items[by_cell_first[c - sb_begin] ..]
    const long long* region;              // per rank: bytes of one copy of its mailbox's cells
    int n_send, n_dests, n_sources, n_recv;
    int recv_begin, me, n_ranks, sb_begin;
    int sb_end, reserved;
};

__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Poll until ready() holds; false if PEER_TIMEOUT_NS passed first (a rank that died).
template <typename F> __device__ __forceinline__ bool poll(F ready) {
    unsigned long long start = 0;
    while (!ready()) {
        unsigned long long now = global_ns();
        if (start == 0) start = now;
        else if (now - start > PEER_TIMEOUT_NS) return false;
        __nanosleep(100);
    }
    return true;
}

// Wait until the word at `w` is at least `seq`; false if PEER_TIMEOUT_NS passed first.
__device__ __forceinline__ bool wait_for(const unsigned long long* w, unsigned long long seq) {
    return poll([&] { return *(const volatile unsigned long long*)w >= seq; });
}

__device__ __forceinline__ unsigned long long* mailbox_word(const PeerArgs& p, int rank, long long word) {
    return (unsigned long long*)p.mailboxes[rank] + word;
}

// Rank `rank`'s mailbox as the cells of exchange `seq` are placed (their copy).
__device__ __forceinline__ unsigned long long mailbox_cells(const PeerArgs& p, int rank, unsigned long long seq) {
    return p.mailboxes[rank] + (seq & 1ull) * (unsigned long long)p.region[rank];
}

// Store this rank's send cells into the destinations' mailboxes, then (the last block) the
// flag `seq` in each destination's mailbox.
template <typename T>
__device__ __forceinline__ void peer_send(const Arrays<T>& a, const PeerArgs& p, unsigned long long seq) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < p.n_send) {
        int c = p.send_cells[k];
        unsigned long long base = mailbox_cells(p, p.send_dest[k], seq);
        *(V4<T>*)(base + p.send_off[2 * k]) = a.v1[c];
        *(V4<T>*)(base + p.send_off[2 * k + 1]) = a.v2[c];
    }
    // Every store of the block visible to the other GPUs before the block is counted.
    __threadfence_system();
    __syncthreads();
    if (threadIdx.x == 0) {
        bool last = atomicAdd(p.counter, 1ull) == gridDim.x - 1;
        if (last) {
            *p.counter = 0;
            __threadfence_system();
            for (int d = 0; d < p.n_dests; d++)
                *(volatile unsigned long long*)mailbox_word(p, p.dests[d], p.me) = seq;
        }
    }
}

// The update's own send (update_peer): after step k's update, the send block's new states
// (this thread's cell `cell`, just written to o1/o2) go straight into the destinations'
// mailboxes for step k + 1, and the last of the blocks that hold send-block cells raises the
// flag `seq` in each destination: the next step's halo then travels as soon as the update
// is done, without a send kernel after it. Every thread of a block calls it (or none).
template <typename T>
__device__ __forceinline__ void peer_send_updated(const Arrays<T>& a, const PeerArgs& p, int cell,
                                                  unsigned long long seq) {
    int first = p.sb_begin / (int)blockDim.x, last = (p.sb_end - 1) / (int)blockDim.x;
    if (p.sb_end <= p.sb_begin || (int)blockIdx.x < first || (int)blockIdx.x > last) return;
    if (cell >= p.sb_begin && cell < p.sb_end) {
        V4<T> x = a.o1[cell], y = a.o2[cell];
        for (int i = p.by_cell_first[cell - p.sb_begin]; i < p.by_cell_first[cell - p.sb_begin + 1]; i++) {
            int k = p.by_cell_items[i];
            unsigned long long base = mailbox_cells(p, p.send_dest[k], seq);
            *(V4<T>*)(base + p.send_off[2 * k]) = x;
            *(V4<T>*)(base + p.send_off[2 * k + 1]) = y;
        }
    }
    __threadfence_system();
    __syncthreads();
    if (threadIdx.x == 0 && atomicAdd(p.counter, 1ull) == (unsigned long long)(last - first)) {
        *p.counter = 0;
        __threadfence_system();
        for (int d = 0; d < p.n_dests; d++) *(volatile unsigned long long*)mailbox_word(p, p.dests[d], p.me) = seq;
    }
}

// Wait for every source's flag `seq`, then copy the mailbox's cells into the receive block.
// False (in every thread of the block) if a source did not answer.
template <typename T>
__device__ __forceinline__ bool peer_receive(const Arrays<T>& a, const PeerArgs& p, unsigned long long seq) {
    __shared__ bool ok;
    if (threadIdx.x == 0) {
        ok = true;
        for (int s = 0; s < p.n_sources && ok; s++) ok = wait_for(mailbox_word(p, p.me, p.sources[s]), seq);
        __threadfence_system();
    }
    __syncthreads();
    if (!ok) return false;
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < p.n_recv) {
        const V4<T>* box = (const V4<T>*)(mailbox_cells(p, p.me, seq) + PEER_HEADER_BYTES);
        // Plain loads: no thread of this kernel read these words before the flag was seen,
        // so no cache holds them from before the other GPU's stores. The receive block is
        // read by this step's communication edges, after this kernel.
        ((V4<T>*)a.v1)[p.recv_begin + k] = box[k];
        ((V4<T>*)a.v2)[p.recv_begin + k] = box[p.n_recv + k];
    }
    return true;
}

// The minimum over the ranks of the time step's bits and of the health flag: this rank's
// go to every other rank's slot, then the others' are awaited in this rank's slots.
//
// Each of the two words a rank sends carries the exchange's number in its top 31 bits (tag)
// and 33 bits of payload: the low half of the bits and the health flag, then the high half.
// A word is one store, so a receiver that sees both tags has both halves, and no fence is
// needed between the payload and a flag: the minimum costs one NVLink crossing, not a store,
// a system fence's round trip and a second store. The n-th minimum of a run (counted in this
// rank's own, otherwise unused, slot) takes the slot's pair of words n mod 2: a rank writes
// minimum n + 2's pair only after it saw every other rank's words of n + 1, which each wrote
// after it had read this rank's of n. So a pair holds only the tags of this minimum and the
// one two before (or the cleared mailbox's zeros), and 31 bits of the exchange's number tell
// them apart.
//
// Ordering: the words are stored after a release fence at system scope, and read by loads
// that acquire at system scope, so what a rank stored before its words is seen by the others
// after theirs. That covers the ghost words (peer_send_ghosts), stored by other threads of
// this GPU before the minimum: each storing thread's block barrier (block_min_bits), its
// thread 0's release of the blocks' counter at GPU scope (dt_resident) and the last block's
// acquire of it order them before this fence (causality order is transitive in the PTX memory
// model), so the storing threads need no system fence of their own (a microsecond a step).
#define PEER_TAG_SHIFT 33
__device__ __forceinline__ unsigned long long peer_tag(unsigned long long seq) { return seq & 0x7fffffffull; }

// Word `word` of source rank `source`'s reduce slot in the mailbox at `box` (four words; the
// own rank's slot holds its count of minima in word 0).
__device__ __forceinline__ unsigned long long* reduce_slot(unsigned long long box, int source, int word) {
    return (unsigned long long*)box + PEER_MAX_RANKS + 4 * source + word;
}

__device__ __forceinline__ unsigned long long load_acquire_sys(const unsigned long long* w) {
    unsigned long long v;
    asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(w) : "memory");
    return v;
}

// What the last block's exchange of minima reads from memory, loaded by each block's thread
// 0 (and the first n_ranks threads: a block has at least as many, connect_ipc_exchange in
// ipc.rs) at the kernel's start, so that those loads overlap the block's cells instead of
// lying on the step's critical path: the mailboxes as mapped here (into `boxes`, shared
// memory: read after dt_resident's block barriers) and this rank's count of minima.
__device__ __forceinline__ unsigned long long peer_prefetch(const PeerArgs& p, unsigned long long* boxes) {
    if ((int)threadIdx.x < p.n_ranks) boxes[threadIdx.x] = p.mailboxes[threadIdx.x];
    return threadIdx.x == 0 ? *reduce_slot(p.mailboxes[p.me], p.me, 0) : 0ull;
}

// Store this rank's minimum `bits` and health flag `bad` of exchange `seq` into every other
// rank's slot (the count of minima `count`, prefetched); the pair of words taken.
__device__ __forceinline__ int peer_reduce_send(const PeerArgs& p, const unsigned long long* boxes,
                                                unsigned long long count, unsigned long long seq,
                                                unsigned long long bits, unsigned long long bad) {
    const unsigned long long half = 0xffffffffull, tag = peer_tag(seq) << PEER_TAG_SHIFT;
    unsigned long long lo = tag | (bits & half) | (bad != 0 ? half + 1 : 0ull), hi = tag | (bits >> 32);
    int pair = 2 * (int)(count & 1ull);
    asm volatile("fence.acq_rel.sys;" ::: "memory");
    for (int r = 0; r < p.n_ranks; r++) {
        if (r == p.me) continue;
        volatile unsigned long long* slot = reduce_slot(boxes[r], p.me, pair);
        slot[0] = lo;
        slot[1] = hi;
    }
    *reduce_slot(boxes[p.me], p.me, 0) = count + 1;
    return pair;
}

// Wait for every other rank's words of exchange `seq` in pair `pair` and fold them into
// `bits` and `bad`. False if a rank did not answer within PEER_TIMEOUT_NS.
__device__ __forceinline__ bool peer_reduce_wait(const PeerArgs& p, const unsigned long long* boxes, int pair,
                                                 unsigned long long seq, unsigned long long& bits,
                                                 unsigned long long& bad) {
    const unsigned long long half = 0xffffffffull, tag = peer_tag(seq);
    for (int r = 0; r < p.n_ranks; r++) {
        if (r == p.me) continue;
        const unsigned long long* slot = reduce_slot(boxes[p.me], r, pair);
        unsigned long long lo, hi;
        bool answered = poll([&] {
            lo = load_acquire_sys(slot);
            hi = load_acquire_sys(slot + 1);
            return (lo >> PEER_TAG_SHIFT) == tag && (hi >> PEER_TAG_SHIFT) == tag;
        });
        if (!answered) return false;
        unsigned long long other = (lo & half) | ((hi & half) << 32);
        bits = other < bits ? other : bits;
        bad |= (lo >> 32) & 1ull;
    }
    return true;
}

// The last block's thread 0 of a time-step kernel on several GPUs: this rank's minimum and
// health flag (`mine`, from dt_resident) traded with the other ranks, then the step. The
// control block's words the step reads are loaded while the others' minima are awaited.
template <typename T>
__device__ __forceinline__ void peer_finalize(const PeerArgs& p, const unsigned long long* boxes,
                                              unsigned long long count, Control* c, unsigned long long seq,
                                              const unsigned long long* mine) {
    unsigned long long bits = mine[0], bad = mine[1];
    int pair = peer_reduce_send(p, boxes, count, seq, bits, bad);
    Control in = *c;
    if (!peer_reduce_wait(p, boxes, pair, seq, bits, bad)) { c->blocks = 0; c->stop = 4; return; }
    finalize_from<T>(in, c, bits, bad);
}

// Words per receive cell of the ghost updates: v1, v2, the slots' words s0, t1, s2, t3, s4,
// t5 (layer-2 words resolved: a quiet slot's zeros), and (lo.x, lo.y, Coriolis f, 0).
#define PEER_GHOST_WORDS 9

// Ghost word j of receive cell r (of n) for exchange seq, in the mailbox at `box`: after the
// header and the two copies of the cells (4 n words).
template <typename T>
__device__ __forceinline__ V4<T>* ghost_word(unsigned long long box, long long n, long long r, int j,
                                             unsigned long long seq) {
    long long w = 4 * n + (long long)(seq & 1ull) * PEER_GHOST_WORDS * n + (long long)j * n + r;
    return (V4<T>*)(box + PEER_HEADER_BYTES) + w;
}

// Store the ghost words of this rank's send cells for exchange `seq` into the destinations'
// mailboxes (the grid's threads in turn over the entries). The receive cell's index and the
// receiver's count follow from the entry's two offsets (PEER_HEADER_BYTES + r words, and n
// words further). The stores travel while the threads compute their cells' minima; the
// minimum's words, stored after every block was counted, cover them (peer_reduce_send).
template <typename T>
__device__ __forceinline__ void peer_send_ghosts(const Arrays<T>& a, const Model<T>& m, const PeerArgs& p,
                                                 unsigned long long seq) {
    long long step = (long long)gridDim.x * blockDim.x;
    for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < p.n_send; k += step) {
        int c = p.send_cells[k];
        long long o1 = p.send_off[2 * k], o2 = p.send_off[2 * k + 1];
        long long n = (o2 - o1) / (long long)sizeof(V4<T>), r = (o1 - PEER_HEADER_BYTES) / (long long)sizeof(V4<T>);
        unsigned long long box = p.mailboxes[p.send_dest[k]];
        V4<T> s0 = a.acc[c], s2 = a.acc[2 * a.stride + c], s4 = a.acc[4 * a.stride + c];
        V2<T> l = a.lo[c];
        V4<T> extra = {l.x, l.y, cell_coriolis(m, a.coriolis, c), T(0)};
        *ghost_word<T>(box, n, r, 0, seq) = a.v1[c];
        *ghost_word<T>(box, n, r, 1, seq) = a.v2[c];
        *ghost_word<T>(box, n, r, 2, seq) = s0;
        *ghost_word<T>(box, n, r, 3, seq) = layer2_word(a.acc, s0, a.stride + c);
        *ghost_word<T>(box, n, r, 4, seq) = s2;
        *ghost_word<T>(box, n, r, 5, seq) = layer2_word(a.acc, s2, 3 * a.stride + c);
        *ghost_word<T>(box, n, r, 6, seq) = s4;
        *ghost_word<T>(box, n, r, 7, seq) = layer2_word(a.acc, s4, 5 * a.stride + c);
        *ghost_word<T>(box, n, r, 8, seq) = extra;
    }
}

// Receive cell r's update from the words its owner sent for exchange `seq` (peer_send_ghosts),
// after this rank saw that exchange's minimum: the owner's update_cell, bit for bit.
template <typename T>
__device__ __forceinline__ void update_ghost(const Arrays<T>& a, const Model<T>& m, const PeerArgs& p, T dt, int r,
                                             unsigned long long seq) {
    unsigned long long box = p.mailboxes[p.me];
    long long n = p.n_recv;
    // Plain loads: no thread of this kernel read these words before; the minimum's words that
    // cover them were acquired by the time-step kernel before this one.
    V4<T> v1 = *ghost_word<T>(box, n, r, 0, seq), v2 = *ghost_word<T>(box, n, r, 1, seq);
    V4<T> s0 = *ghost_word<T>(box, n, r, 2, seq), t1 = *ghost_word<T>(box, n, r, 3, seq);
    V4<T> s2 = *ghost_word<T>(box, n, r, 4, seq), t3 = *ghost_word<T>(box, n, r, 5, seq);
    V4<T> s4 = *ghost_word<T>(box, n, r, 6, seq), t5 = *ghost_word<T>(box, n, r, 7, seq);
    V4<T> extra = *ghost_word<T>(box, n, r, 8, seq);
    V2<T> l = {extra.x, extra.y};
    bool ok = update_state<T>(v1, v2, l, s0, s2, s4, t1, t3, t5, m, dt, extra.z);
    a.o1[p.recv_begin + r] = v1;
    a.o2[p.recv_begin + r] = v2;
    if (!ok) atomicOr(&a.scratch[1], 1ull);
}

#define PYCNO_PEER(T, SUFFIX)                                                                                     \
    /* Exchange x of a batch (from 1), in stage `stage` of step k (stage_runs): send (and flag) this       \
       rank's cells of the buffer set the stage reads; receive the others' into its receive block. */         \
    extern "C" __global__ void send_peer_##SUFFIX(Arrays<T> a, PeerArgs p, const Control* c, unsigned long long k, \
                                                  int stage, unsigned long long x) {                             \
        pdl_wait();                                                                                               \
        if (!stage_runs(c, k, stage)) return;                                                                     \
        peer_send<T>(a, p, c->seq + x);                                                                           \
    }                                                                                                             \
    extern "C" __global__ void receive_peer_##SUFFIX(Arrays<T> a, PeerArgs p, Control* c, unsigned long long k,     \
                                                     int stage, unsigned long long x) {                          \
        pdl_wait();                                                                                               \
        if (!stage_runs(c, k, stage)) return;                                                                     \
        if (!peer_receive<T>(a, p, c->seq + x) && threadIdx.x == 0) c->stop = 4;                                \
    }                                                                                                             \
    /* Step k's update (update_resident), then the send block for step k + 1 (peer_send_updated). */          \
    extern "C" __global__ void update_peer_##SUFFIX(Arrays<T> a, Model<T> m, const Control* c,                   \
                                                    unsigned long long k, int early, PeerArgs p) {              \
        pdl_wait();                                                                                               \
        pdl_trigger(early);                                                                                       \
        unsigned long long seq = c->seq;                                                                          \
        int cell = blockIdx.x * blockDim.x + threadIdx.x;                                                        \
        if (update_step<T>(a, m, c, k, cell)) peer_send_updated<T>(a, p, cell, seq + k + 2);                     \
    }                                                                                                             \
    /* The time step over the owned cells, its minimum over the ranks (peer_finalize), the step; numbered  \
       as exchange k + 1 of the batch (second order passes 2 k: its step's first exchange). */               \
    extern "C" __global__ void dt_peer_##SUFFIX(Arrays<T> a, T two_gamma, Control* c, PeerArgs p,                 \
                                                unsigned long long k) {                                           \
        pdl_wait();                                                                                               \
        __shared__ unsigned long long boxes[PEER_MAX_RANKS];                                                      \
        unsigned long long count = peer_prefetch(p, boxes), mine[2];                                              \
        if (!dt_resident<T>(a, two_gamma, c, 2, true, mine) || threadIdx.x != 0) return;                          \
        peer_finalize<T>(p, boxes, count, c, c->seq + k + 1, mine);                                               \
    }                                                                                                             \
    /* Ghost updates: dt_peer, its blocks first storing the send cells' ghost words (peer_send_ghosts). */   \
    extern "C" __global__ void dt_ghost_peer_##SUFFIX(Arrays<T> a, T two_gamma, Control* c, PeerArgs p,           \
                                                      unsigned long long k, Model<T> m) {                        \
        pdl_wait();                                                                                               \
        __shared__ unsigned long long boxes[PEER_MAX_RANKS];                                                      \
        unsigned long long count = peer_prefetch(p, boxes), mine[2];                                              \
        if (*(volatile unsigned long long*)&c->stop != 0) return;                                                 \
        unsigned long long seq = c->seq + k + 1;                                                                  \
        peer_send_ghosts<T>(a, m, p, seq);                                                                        \
        if (!dt_resident<T>(a, two_gamma, c, 2, false, mine) || threadIdx.x != 0) return;                         \
        peer_finalize<T>(p, boxes, count, c, seq, mine);                                                          \
    }                                                                                                             \
    /* Step k's update of the owned cells (update_resident) and of the receive block (update_ghost): */       \
    /* threads n_owned .. n_owned + n_recv take the receive cells. */                                           \
    extern "C" __global__ void update_ghost_peer_##SUFFIX(Arrays<T> a, Model<T> m, const Control* c,             \
                                                          unsigned long long k, int early, PeerArgs p) {        \
        pdl_wait();                                                                                               \
        pdl_trigger(early);                                                                                       \
        int cell = blockIdx.x * blockDim.x + threadIdx.x;                                                        \
        int r = cell - a.n_owned;                                                                                 \
        if (update_step<T>(a, m, c, k, cell) && r >= 0 && r < p.n_recv)                                          \
            update_ghost<T>(a, m, p, (T)c->dt, r, c->seq + k + 1);                                                \
    }

PYCNO_PEER(float, f32)
PYCNO_PEER(double, f64)
