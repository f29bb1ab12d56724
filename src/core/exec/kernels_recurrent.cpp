// Recurrent layers as torch.export keeps them: lstm.input and gru.input (nn.LSTM,
// nn.GRU), every layer and direction, with or without biases. Not projections
// (proj_size) nor dropout between layers in training (pt2lab does not
// reproduce torch's random masks). Reference loops: dot products in double,
// states kept in float32 as ATen keeps them.
#include <cmath>
#include <cstring>

#include "exec/kernels.h"

namespace pt2lab {

namespace {

// One (layer, direction)'s weights: w_ih [G*H, I], w_hh [G*H, H], biases [G*H] or null.
struct Cell {
    const Tensor* w_ih = nullptr;
    const Tensor* w_hh = nullptr;
    const Tensor* b_ih = nullptr;
    const Tensor* b_hh = nullptr;
};

// y[g] = b[g] + sum_k w[g, k] * x[k] for g < rows (w: [rows, K]), in double, rounded once.
void affine(const Tensor& w, const Tensor* b, const float* x, int64_t rows, int64_t K, float* y) {
    const float* wd = w.f32();
    for (int64_t g = 0; g < rows; ++g) {
        double acc = b ? double(b->f32()[g]) : 0.0;
        for (int64_t k = 0; k < K; ++k) acc += double(wd[g * K + k]) * double(x[k]);
        y[g] = static_cast<float>(acc);
    }
}

float sigmoid_f(float v) {
    return static_cast<float>(1.0 / (1.0 + std::exp(-double(v))));
}
float tanh_f(float v) {
    return static_cast<float>(std::tanh(double(v)));
}

// What lstm.input and gru.input share: the arguments after hx, checked.
struct Recurrent {
    const char* op = "";
    int64_t gates = 0; // 4 (LSTM: i, f, g, o) or 3 (GRU: r, z, n)
    int64_t layers = 0, dirs = 1, T = 0, B = 0, I = 0, H = 0;
    bool batch_first = false;
    std::vector<Cell> cells; // layer-major, then direction
};

Status require_float(const char* op, const Tensor& t, const char* what) {
    if (t.dtype != ScalarType::Float)
        return kernel_error(std::string(op) + ": " + what + ": expected float32, got " +
                            t.type_str());
    return {};
}

// input [T, B, I] (or [B, T, I] with batch_first), params as torch flattens them:
// per layer and direction w_ih, w_hh[, b_ih, b_hh].
Result<Recurrent> read_recurrent(const CallArgs& a, const char* op, int64_t gates, int64_t H) {
    Recurrent r;
    r.op = op;
    r.gates = gates;
    auto x = a.tensor(0);
    if (!x.ok()) return x.error();
    auto has_biases = a.boolean(3);
    auto layers = a.integer(4);
    auto dropout = a.real(5);
    auto train = a.boolean(6);
    auto bidirectional = a.boolean(7);
    auto batch_first = a.boolean(8);
    for (const Status& s : {has_biases.status(), layers.status(), dropout.status(), train.status(),
                            bidirectional.status(), batch_first.status()})
        if (!s.ok()) return s.error();
    const Tensor& in = *x.value();
    if (Status s = require_float(op, in, "input"); !s.ok()) return s.error();
    if (in.dim() != 3)
        return kernel_error(std::string(op) + ": input must have 3 dimensions, got " +
                            std::to_string(in.dim()));
    if (train.value() && dropout.value() > 0.0 && layers.value() > 1)
        return kernel_error(std::string(op) + ": dropout between layers in training mode",
                            "pt2lab does not reproduce torch's random masks: export in eval()");
    if (layers.value() < 1)
        return kernel_error(std::string(op) + ": num_layers must be at least 1");
    r.layers = layers.value();
    r.dirs = bidirectional.value() ? 2 : 1;
    r.batch_first = batch_first.value();
    r.T = in.sizes[r.batch_first ? 1 : 0];
    r.B = in.sizes[r.batch_first ? 0 : 1];
    r.I = in.sizes[2];
    r.H = H;
    if (a[2].kind != Value::Kind::Tuple)
        return kernel_error(std::string(op) + ": params: expected a list of tensors, got " +
                            a[2].describe());
    const std::vector<Value>& p = a[2].items;
    const size_t per = has_biases.value() ? 4 : 2;
    if (p.size() != per * static_cast<size_t>(r.layers * r.dirs))
        return kernel_error(std::string(op) + ": expected " +
                                std::to_string(per * static_cast<size_t>(r.layers * r.dirs)) +
                                " parameter tensors, got " + std::to_string(p.size()),
                            "projections (proj_size > 0) are not supported");
    for (const Value& v : p)
        if (!v.is_tensor())
            return kernel_error(std::string(op) + ": params: expected tensors, got " +
                                v.describe());
    for (int64_t l = 0; l < r.layers; ++l) {
        const int64_t in_size = l == 0 ? r.I : r.dirs * H;
        for (int64_t d = 0; d < r.dirs; ++d) {
            const size_t base = per * static_cast<size_t>(l * r.dirs + d);
            Cell c;
            c.w_ih = p[base].tensor.get();
            c.w_hh = p[base + 1].tensor.get();
            if (per == 4) {
                c.b_ih = p[base + 2].tensor.get();
                c.b_hh = p[base + 3].tensor.get();
            }
            const std::vector<int64_t> ih = {gates * H, in_size}, hh = {gates * H, H},
                                       b = {gates * H};
            bool shapes = c.w_ih->sizes == ih && c.w_hh->sizes == hh &&
                          (!c.b_ih || (c.b_ih->sizes == b && c.b_hh->sizes == b));
            for (const Tensor* t : {c.w_ih, c.w_hh, c.b_ih, c.b_hh})
                shapes = shapes && (!t || t->dtype == ScalarType::Float);
            if (!shapes)
                return kernel_error(
                    std::string(op) + ": layer " + std::to_string(l) + " direction " +
                    std::to_string(d) + ": weights of the wrong shape or dtype (w_ih " +
                    shape_str(c.w_ih->sizes) + ", expected " + shape_str(ih) + "; w_hh " +
                    shape_str(c.w_hh->sizes) + ", expected " + shape_str(hh) + ")");
            r.cells.push_back(c);
        }
    }
    return r;
}

// A state tensor (h0 or c0): [layers * dirs, B, H], float32.
Status check_state(const Recurrent& r, const Tensor& t, const char* what) {
    if (Status s = require_float(r.op, t, what); !s.ok()) return s;
    const std::vector<int64_t> want = {r.layers * r.dirs, r.B, r.H};
    if (t.sizes != want)
        return kernel_error(std::string(r.op) + ": Expected hidden size " + shape_str(want) +
                            ", got " + shape_str(t.sizes));
    return {};
}

// Runs every layer and direction. h (and c for the LSTM, else null): [layers * dirs, B, H],
// the initial states in, the final ones out. Returns the last layer's output [T, B, dirs * H].
Result<Tensor> run_layers(const Recurrent& r, const KernelOptions& opt, const Tensor& input,
                          float* h, float* c) {
    const int64_t T = r.T, B = r.B, H = r.H, G = r.gates * H;
    const std::string op = r.op;
    // the multiply-adds of every step of every layer, charged before any is done
    for (int64_t l = 0; l < r.layers; ++l) {
        const int64_t in_size = l == 0 ? r.I : r.dirs * H;
        if (Status s = charge_work(opt, work_of({r.dirs, T, B, G, in_size + H}), op); !s.ok())
            return s.error();
    }
    // x: [T, B, I] whatever the layout of `input`
    std::vector<float> x(static_cast<size_t>(T * B * r.I));
    for (int64_t t = 0; t < T; ++t)
        for (int64_t b = 0; b < B; ++b)
            std::memcpy(&x[static_cast<size_t>((t * B + b) * r.I)],
                        input.f32() + (r.batch_first ? (b * T + t) : (t * B + b)) * r.I,
                        static_cast<size_t>(r.I) * sizeof(float));
    std::vector<float> gi(static_cast<size_t>(G)), gh(static_cast<size_t>(G));
    Tensor out;
    for (int64_t l = 0; l < r.layers; ++l) {
        const int64_t in_size = l == 0 ? r.I : r.dirs * H;
        auto yr = new_tensor(opt, ScalarType::Float, {T, B, r.dirs * H}, op);
        if (!yr.ok()) return yr.error();
        float* y = yr.value().f32(); // y: [T, B, dirs * H]
        for (int64_t d = 0; d < r.dirs; ++d) {
            const Cell& cell = r.cells[static_cast<size_t>(l * r.dirs + d)];
            float* hs = h + (l * r.dirs + d) * B * H; // [B, H]
            float* cs = c ? c + (l * r.dirs + d) * B * H : nullptr;
            for (int64_t s = 0; s < T; ++s) {
                const int64_t t = d == 0 ? s : T - 1 - s;
                for (int64_t b = 0; b < B; ++b) {
                    float* hb = hs + b * H;
                    affine(*cell.w_ih, cell.b_ih, &x[static_cast<size_t>((t * B + b) * in_size)], G,
                           in_size, gi.data());
                    affine(*cell.w_hh, cell.b_hh, hb, G, H, gh.data());
                    for (int64_t j = 0; j < H; ++j) {
                        if (cs) { // LSTM: gates i, f, g, o
                            const float i = sigmoid_f(gi[j] + gh[j]);
                            const float f = sigmoid_f(gi[H + j] + gh[H + j]);
                            const float g = tanh_f(gi[2 * H + j] + gh[2 * H + j]);
                            const float o = sigmoid_f(gi[3 * H + j] + gh[3 * H + j]);
                            float& cj = cs[b * H + j];
                            cj = f * cj + i * g;
                            hb[j] = o * tanh_f(cj);
                        } else { // GRU: gates r, z, n
                            const float rg = sigmoid_f(gi[j] + gh[j]);
                            const float z = sigmoid_f(gi[H + j] + gh[H + j]);
                            const float n = tanh_f(gi[2 * H + j] + gh[2 * H + j] * rg);
                            hb[j] = (hb[j] - n) * z + n;
                        }
                    }
                    std::memcpy(y + (t * B + b) * r.dirs * H + d * H, hb,
                                static_cast<size_t>(H) * sizeof(float));
                }
            }
        }
        out = yr.take();
        x.assign(out.f32(), out.f32() + out.numel()); // the next layer's input
    }
    if (!r.batch_first) return out;
    // [T, B, dirs * H] -> [B, T, dirs * H]
    const int64_t F = r.dirs * H;
    auto br = new_tensor(opt, ScalarType::Float, {B, T, F}, op);
    if (!br.ok()) return br.error();
    for (int64_t t = 0; t < T; ++t)
        for (int64_t b = 0; b < B; ++b)
            std::memcpy(br.value().f32() + (b * T + t) * F, out.f32() + (t * B + b) * F,
                        static_cast<size_t>(F) * sizeof(float));
    return br;
}

// The final state: a copy of the initial one the layers then overwrite.
Result<Tensor> state_copy(const KernelOptions& opt, const Tensor& t, const char* op) {
    auto s = new_tensor(opt, ScalarType::Float, t.sizes, op);
    if (!s.ok()) return s;
    std::memcpy(s.value().f32(), t.f32(), static_cast<size_t>(t.numel()) * sizeof(float));
    return s;
}

} // namespace

// lstm.input(input, hx=[h0, c0], params, has_biases, num_layers, dropout, train,
// bidirectional, batch_first) -> (output, h_n, c_n)
Result<Value> kernel_lstm(const CallArgs& a, const KernelOptions& opt) {
    const char* op = "aten.lstm.input";
    if (a[1].kind != Value::Kind::Tuple || a[1].items.size() != 2 || !a[1].items[0].is_tensor() ||
        !a[1].items[1].is_tensor())
        return kernel_error(std::string(op) + ": lstm expects two hidden states, got " +
                            a[1].describe());
    const Tensor& h0 = *a[1].items[0].tensor;
    const Tensor& c0 = *a[1].items[1].tensor;
    if (h0.dim() != 3)
        return kernel_error(std::string(op) + ": hx[0] must have 3 dimensions, got " +
                            std::to_string(h0.dim()));
    auto r = read_recurrent(a, op, 4, h0.sizes[2]);
    if (!r.ok()) return r.error();
    if (Status s = check_state(r.value(), h0, "hx[0]"); !s.ok()) return s.error();
    if (Status s = check_state(r.value(), c0, "hx[1]"); !s.ok()) return s.error();
    auto h = state_copy(opt, h0, op);
    if (!h.ok()) return h.error();
    auto c = state_copy(opt, c0, op);
    if (!c.ok()) return c.error();
    auto y = run_layers(r.value(), opt, *a.tensor(0).value(), h.value().f32(), c.value().f32());
    if (!y.ok()) return y.error();
    return Value::tuple({Value::of(y.take()), Value::of(h.take()), Value::of(c.take())});
}

// gru.input(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
// batch_first) -> (output, h_n)
Result<Value> kernel_gru(const CallArgs& a, const KernelOptions& opt) {
    const char* op = "aten.gru.input";
    auto hx = a.tensor(1);
    if (!hx.ok()) return hx.error();
    const Tensor& h0 = *hx.value();
    if (h0.dim() != 3)
        return kernel_error(std::string(op) + ": hx must have 3 dimensions, got " +
                            std::to_string(h0.dim()));
    auto r = read_recurrent(a, op, 3, h0.sizes[2]);
    if (!r.ok()) return r.error();
    if (Status s = check_state(r.value(), h0, "hx"); !s.ok()) return s.error();
    auto h = state_copy(opt, h0, op);
    if (!h.ok()) return h.error();
    auto y = run_layers(r.value(), opt, *a.tensor(0).value(), h.value().f32(), nullptr);
    if (!y.ok()) return y.error();
    return Value::tuple({Value::of(y.take()), Value::of(h.take())});
}

} // namespace pt2lab
