// The order-2 kernels of kernels/order2.cu (and the time step of solver.cu) run on the host,
// one thread after another, over a layout that tests/kernels_host.rs writes into a
// directory: `steps DIR f32|f64 STEPS GAMMA [tiles|finish]` takes STEPS second-order steps as
// src/solver/cuda/order2.rs launches them (reconstruct and edge2, or with `tiles` the tile
// kernel over the tiles written there; dt at the first stage, update2, the buffer sets swapped
// after each stage; with `finish` the second stage's tiles finish the cells marked in them as
// the device-resident steps of src/solver/cuda/resident.rs have them, and the update takes
// only the cells of rest.bin, their words put in the list's order by the tiles (RestArrays,
// each place's index in rest_of.bin); with `sums` also the first stage's tiles sum the other
// cells' slots and take their time steps, the time step then takes the cells of rest.bin and
// the update reads the sums of the cells of summed.bin, then the listed cells) and writes the
// state, the time steps, the flags, and the edge values of a reconstruction of the final
// state. The accumulators start as NaN, so a word read before it was written shows.
#include "prelude.h"
#include "kernels.cu"
template <class T> std::vector<T> readv(const std::string& p) { FILE* f = fopen(p.c_str(), "rb"); fseek(f, 0, SEEK_END); long s = ftell(f); fseek(f, 0, SEEK_SET); std::vector<T> v(s / sizeof(T) + 1); fread(v.data(), 1, s, f); fclose(f); v.resize(s / sizeof(T)); return v; }
template <class T> void writev(const std::string& p, const std::vector<T>& v) { FILE* f = fopen(p.c_str(), "wb"); fwrite(v.data(), sizeof(T), v.size(), f); fclose(f); }
template <class T, class K> void each(int n, K k) { blockDim.x = 1; threadIdx.x = 0; for (int i = 0; i < n; ++i) { blockIdx.x = i; k(); } }
template <class T> void run(const std::string& d, int steps, double gamma,
                            void (*rec)(Arrays<T>, Order2Arrays<T>, Model<T>, int, int, int),
                            void (*edge)(Arrays<T>, Order2Arrays<T>, Model<T>, int, int, T),
                            void (*dtk)(Arrays<T>, T),
                            void (*dt_rest)(Arrays<T>, T, RestArrays<T>),
                            void (*upd)(Arrays<T>, Order2Arrays<T>, Model<T>, T, int, RestArrays<T>, const unsigned*),
                            void (*tile)(Arrays<T>, Order2Arrays<T>, TileArrays<T>, Model<T>, int, T),
                            void (*tile_sums)(Arrays<T>, Order2Arrays<T>, TileArrays<T>, RestArrays<T>, Model<T>, int, T, T),
                            void (*tile_finish)(Arrays<T>, Order2Arrays<T>, TileArrays<T>, RestArrays<T>, Model<T>, int, T, T),
                            bool tiled, bool finish, bool sums) {
    auto hdr = readv<long long>(d + "/hdr.bin");
    int nc = hdr[0], no = hdr[1], ne = hdr[2];
    auto mb = readv<char>(d + "/model.bin");
    Model<T> m; memcpy(&m, mb.data(), sizeof(m));
    auto v1 = readv<T>(d + "/v1.bin"), v2 = readv<T>(d + "/v2.bin"), lo = readv<T>(d + "/lo.bin");
    auto o1 = v1, o2 = v2, olo = lo;
    auto ec = readv<int>(d + "/ecells.bin"); auto en = readv<T>(d + "/enormal.bin");
    auto bb = readv<char>(d + "/boundaries.bin");
    std::vector<Boundary<T>> bnd(bb.size() / sizeof(Boundary<T>)); memcpy(bnd.data(), bb.data(), bb.size());
    auto across = readv<int>(d + "/across.bin"); auto wr = readv<T>(d + "/wr.bin"); auto ln = readv<T>(d + "/ln.bin"); auto depth = readv<T>(d + "/depth.bin");
    auto recon = readv<unsigned char>(d + "/recon.bin");
    // The viscous couplings per edge and per tile place (empty files: no viscosity).
    auto evisc = readv<T>(d + "/evisc.bin"); T* ev = evisc.empty() ? nullptr : evisc.data();
    std::vector<T> tvisc;
    std::vector<int> tcells, tec, tloc; std::vector<T> tnl; int cap = 0;
    std::vector<int> rest, rest_of; if (finish) { rest = readv<int>(d + "/rest.bin"); rest_of = readv<int>(d + "/rest_of.bin"); }
    // The listed cells' words and areas (src/solver/cuda/order2.rs, RestWords).
    size_t nr = rest.size();
    std::vector<T> racc(24 * (nr > 0 ? nr : 1), T(NAN)), rint(4 * (nr > 0 ? nr : 1), T(NAN)), rarea(nr > 0 ? nr : 1, T(0));
    for (size_t k = 0; k < nr; ++k) rarea[k] = v2[4 * (size_t)rest[k] + 3];
    RestArrays<T> ra = {rest.data(), (V4<T>*)racc.data(), (V4<T>*)rint.data(), rarea.data(), (int)nr}, none = {};
    std::vector<unsigned> summed; if (sums) summed = readv<unsigned>(d + "/summed.bin");
    if (tiled) { tcells = readv<int>(d + "/tcells.bin"); cap = readv<int>(d + "/tcap.bin")[0];
                 tec = readv<int>(d + "/tec.bin"); tloc = readv<int>(d + "/tloc.bin"); tnl = readv<T>(d + "/tnl.bin"); tvisc = readv<T>(d + "/tvisc.bin"); }
    TileArrays<T> ta = {(int4*)tcells.data(), (int4*)tec.data(), (int2*)tloc.data(), (V2<T>*)tnl.data(), rest_of.data(), cap,
                        tvisc.empty() ? nullptr : tvisc.data()};
    int ntiles = tiled ? (int)(tec.size() / 4 / cap) : 0;
    std::vector<T> acc(24 * (size_t)nc, T(NAN)), faces(24 * (size_t)nc, T(0)), interior(4 * (size_t)(nc > 0 ? nc : 1), T(0)), cor(1, T(0));
    unsigned long long scratch[3] = {~0ull, 0, 0};
    double t = 0;
    std::vector<double> dts;
    for (int s = 0; s < steps; ++s) {
        for (int stage = 0; stage < 2; ++stage) {
            Arrays<T> a = {(V4<T>*)v1.data(), (V4<T>*)v2.data(), (V4<T>*)o1.data(), (V4<T>*)o2.data(), (V2<T>*)lo.data(), (V2<T>*)olo.data(),
                           (int4*)ec.data(), (V2<T>*)en.data(), (V4<T>*)acc.data(), bnd.data(), scratch, nc, no, 0, cor.data(), ev};
            Order2Arrays<T> o = {(V4<T>*)faces.data(), (V4<T>*)interior.data(), across.data(), (V4<T>*)wr.data(), (V2<T>*)ln.data(), depth.data(), recon.data(), nc};
            double te = stage == 0 ? t : t + dts.back();
            if (tiled) {
                if (finish && stage == 1) each<T>(ntiles, [&] { tile_finish(a, o, ta, ra, m, 0, (T)te, (T)dts.back()); });
                else if (sums && stage == 0) each<T>(ntiles, [&] { tile_sums(a, o, ta, ra, m, 0, (T)te, (T)(2.0 * gamma)); });
                else each<T>(ntiles, [&] { tile(a, o, ta, m, 0, (T)te); });
            } else {
                each<T>(nc, [&] { rec(a, o, m, 0, nc, 3); });
                each<T>(ne, [&] { edge(a, o, m, 0, ne, (T)te); });
            }
            if (stage == 0) {
                if (sums) each<T>(nr > 0 ? (int)nr : 1, [&] { dt_rest(a, (T)(2.0 * gamma), ra); });
                else each<T>(no, [&] { dtk(a, (T)(2.0 * gamma)); });
                T dtv; if (sizeof(T) == 4) { unsigned u = (unsigned)scratch[0]; memcpy(&dtv, &u, 4); } else { memcpy(&dtv, &scratch[0], 8); }
                dts.push_back((double)dtv);
            }
            if (finish && stage == 1) each<T>(nr > 0 ? (int)nr : 1, [&] { upd(a, o, m, (T)dts.back(), stage, ra, nullptr); });
            else if (sums) each<T>(no + (int)nr, [&] { upd(a, o, m, (T)dts.back(), stage, ra, summed.data()); });
            else each<T>(no, [&] { upd(a, o, m, (T)dts.back(), stage, none, nullptr); });
            std::swap(v1, o1); std::swap(v2, o2); std::swap(lo, olo);
        }
        t += dts.back();
    }
    {
        // The edge values of a reconstruction of the final state.
        Arrays<T> a = {(V4<T>*)v1.data(), (V4<T>*)v2.data(), (V4<T>*)o1.data(), (V4<T>*)o2.data(), (V2<T>*)lo.data(), (V2<T>*)olo.data(),
                       (int4*)ec.data(), (V2<T>*)en.data(), (V4<T>*)acc.data(), bnd.data(), scratch, nc, no, 0, cor.data(), ev};
        Order2Arrays<T> o = {(V4<T>*)faces.data(), (V4<T>*)interior.data(), across.data(), (V4<T>*)wr.data(), (V2<T>*)ln.data(), depth.data(), recon.data(), nc};
        each<T>(nc, [&] { rec(a, o, m, 0, nc, 3); });
        writev(d + "/out_faces.bin", faces);
    }
    writev(d + "/out_v1.bin", v1); writev(d + "/out_v2.bin", v2); writev(d + "/out_lo.bin", lo);
    writev(d + "/out_prev_v1.bin", o1);
    writev(d + "/out_dt.bin", dts);
    unsigned long long hs[2] = {scratch[1], scratch[2]}; FILE* f = fopen((d + "/out_scratch.bin").c_str(), "wb"); fwrite(hs, 8, 2, f); fclose(f);
}
int main(int argc, char** argv) {
    std::string d = argv[1], p = argv[2]; int steps = atoi(argv[3]); double gamma = atof(argv[4]);
    std::string mode = argc > 5 ? argv[5] : "";
    bool sums = mode == "sums", finish = sums || mode == "finish", tiled = finish || mode == "tiles";
    if (p == "f32") run<float>(d, steps, gamma, reconstruct_f32, edge2_f32, dt_f32, dt_rest_f32, update2_f32, tile2_f32, tile2_sums_f32, tile2_finish_f32, tiled, finish, sums);
    else run<double>(d, steps, gamma, reconstruct_f64, edge2_f64, dt_f64, dt_rest_f64, update2_f64, tile2_f64, tile2_sums_f64, tile2_finish_f64, tiled, finish, sums);
}
