// Node-by-node evaluation with schema-driven argument binding.
#include "exec/interpreter.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <unordered_map>

#include "exec/conv_fusion.h"

#include "util/rng.h"

namespace pt2lab {

// kernels_index.cpp: writes `written` (a slice's values after an in-place op) into the
// tensor `slice` (slice.Tensor's arguments) took them from.
Status write_back_slice(const CallArgs& slice, const Tensor& written);

ModuleState ModuleState::from_program(const ExportedProgram& ep) {
    ModuleState s;
    s.file_size = ep.file_size;
    for (const auto* m : {&ep.state_dict, &ep.constants})
        for (const auto& [fqn, t] : *m)
            s.tensors[fqn] = std::make_shared<Tensor>(Tensor::from_data(*t));
    return s;
}

ModuleState ModuleState::from_module(const GraphModule& gm) {
    ModuleState s;
    for (const auto& [fqn, t] : gm.attrs)
        s.tensors[fqn] = std::make_shared<Tensor>(Tensor::from_data(*t));
    s.add_missing_observers(gm);
    return s;
}

void ModuleState::add_missing_observers(const GraphModule& gm) {
    for (const auto& [name, sub] : gm.submodules) // instances first, then the names sharing one
        if (sub.observer && sub.shares.empty() && !observers.count(name))
            observers[name] = make_observer(*sub.observer);
    for (const auto& [name, sub] : gm.submodules) {
        if (!sub.observer || sub.shares.empty() || observers.count(name)) continue;
        auto root = observers.find(sub.shares);
        observers[name] = root != observers.end() ? root->second : make_observer(*sub.observer);
    }
}

std::map<std::string, std::shared_ptr<Observer>>
ModuleState::copy_observers(const std::map<std::string, std::shared_ptr<Observer>>& from) {
    std::map<const Observer*, std::shared_ptr<Observer>> copies;
    std::map<std::string, std::shared_ptr<Observer>> out;
    for (const auto& [k, o] : from) {
        auto& c = copies[o.get()];
        if (!c) c = o->clone();
        out[k] = c;
    }
    return out;
}

ModuleState ModuleState::clone() const {
    ModuleState s;
    s.file_size = file_size;
    for (const auto& [k, t] : tensors) s.tensors[k] = std::make_shared<Tensor>(*t);
    s.observers = copy_observers(observers);
    return s;
}

ModuleState ModuleState::share() const {
    ModuleState s;
    s.file_size = file_size;
    s.tensors = tensors;
    s.observers = copy_observers(observers);
    return s;
}

namespace {

Error node_error(const Node& n, const std::string& message, const std::string& hint = {}) {
    return make_error("%" + n.name(), "while executing %" + n.name() + ": " + message, hint);
}

// The dtypes the kernels compute in (Tensor::get/set); anything else is refused
// at the call, before a kernel could read its bytes with the wrong width.
bool executor_dtype(ScalarType t) {
    switch (t) {
    case ScalarType::Float:
    case ScalarType::Double:
    case ScalarType::Long:
    case ScalarType::Int:
    case ScalarType::Byte:
    case ScalarType::Char:
    case ScalarType::Bool: return true;
    default: return false;
    }
}

const Tensor* foreign_dtype(const Value& v) {
    if (v.is_tensor()) return executor_dtype(v.tensor->dtype) ? nullptr : v.tensor.get();
    for (const Value& item : v.items)
        if (const Tensor* t = foreign_dtype(item)) return t;
    return nullptr;
}

class Runner {
public:
    using Clock = std::chrono::steady_clock;

    Runner(const Graph& g, ModuleState& state, const RunOptions& opt)
        : g_(g), state_(state), opt_(opt), budget_(opt.limits, Budget::Scope::Run, state.file_size),
          kernels_(opt.kernels) {
        kernels_.budget = &budget_;
        keep_cap_ = opt.keep_values_bytes ? opt.keep_values_bytes : budget_.bytes_limit() / 2;
    }

    // Prepares a run on `inputs`: the plan (what each node's value is released after,
    // without keep_values, and the conv fusions), given or made now. Nodes run in advance().
    void start(std::vector<Value> inputs) {
        inputs_ = std::move(inputs);
        base_bytes_ = budget_.bytes_used();
        // A node's value is dropped as soon as its last user has run, so a run holds
        // only the live values (peak memory of a forward) and the values it keeps.
        // Conv fusion hides intermediate values: only when none is kept (conv_fusion.h).
        const bool fuse = run_fuses(opt_);
        if (opt_.plan && opt_.plan->fits(g_, fuse)) {
            plan_ = opt_.plan;
        } else {
            RunPlanning p(g_, fuse);
            p.step(SIZE_MAX);
            plan_ = p.take();
        }
    }

    size_t done() const { return step_; }
    size_t total() const { return plan_->nodes.size(); }
    bool finished() const { return step_ >= plan_->nodes.size(); }
    RunResult take_result() { return std::move(result_); }

    // Runs the next node, or the rest of the node in flight, until it is done or
    // `deadline` has passed (looked at after each unit of a kernel job, so at
    // least one unit runs). A node paused inside stays the next one.
    Status step(Clock::time_point deadline) {
        Node* n = plan_->nodes[step_];
        Value v;
        if (running_) {
            if (!run_units(deadline)) return {};
            v = finish_running();
            commit(n, std::move(v));
            return {};
        }
        switch (n->op()) {
        case Op::Placeholder:
            if (next_input_ < inputs_.size()) {
                v = inputs_[next_input_++];
            } else if (!n->args().empty()) {
                auto d = eval(*n, n->args()[0]);
                if (!d.ok()) return d.error();
                v = d.take();
            } else {
                return node_error(*n, "no value given for input '" + n->target() + "'",
                                  "pass one input per placeholder");
            }
            break;
        case Op::GetAttr: {
            auto it = state_.tensors.find(n->target());
            if (it == state_.tensors.end())
                return node_error(*n, "the module has no attribute '" + n->target() + "'",
                                  "the weights for this graph are missing");
            v = Value::of(it->second);
            break;
        }
        case Op::CallFunction: {
            Clock::time_point t0 = opt_.node_times ? Clock::now() : Clock::time_point{};
            auto ms = [&] {
                return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
            };
            if (auto it = fused_.find(n); it != fused_.end()) { // computed by its conv
                v = std::move(it->second);
                fused_.erase(it);
                if (opt_.node_times) opt_.node_times->push_back({n, 0.0, true});
                break;
            }
            if (auto it = plan_->fusions.find(n);
                it != plan_->fusions.end() && start_fused(it->second))
                break;           // running_ holds the fused conv's job
            if (!find_job(*n)) { // a kernel that runs in one call
                auto r = call_function(*n);
                if (!r.ok()) return r.error();
                v = r.take();
                if (opt_.node_times) opt_.node_times->push_back({n, ms(), false});
                break;
            }
            if (Status st = start_job(*n); !st.ok()) return st;
            break;
        }
        case Op::CallModule: {
            Clock::time_point t0 = opt_.node_times ? Clock::now() : Clock::time_point{};
            auto r = call_module(*n);
            if (!r.ok()) return r.error();
            v = r.take();
            if (opt_.node_times && !running_)
                opt_.node_times->push_back(
                    {n, std::chrono::duration<double, std::milli>(Clock::now() - t0).count(),
                     false});
            break;
        }
        case Op::CallMethod:
            return node_error(*n,
                              "call_method '" + n->target() +
                                  "' cannot run: pt2lab runs exported (ATen) graphs",
                              "open the torch.export version of this model");
        case Op::Output: {
            if (n->args().empty()) break;
            auto out = eval(*n, n->args()[0]);
            if (!out.ok()) return out.error();
            const Argument& a = n->args()[0];
            if (a.kind == ArgKind::Tuple || a.kind == ArgKind::List) {
                result_.outputs = out.value().items;
                for (const Argument& item : a.items)
                    result_.output_names.push_back(item.is_node() ? item.node->name() : "");
            } else {
                result_.outputs = {out.value()};
                result_.output_names = {a.is_node() ? a.node->name() : ""};
            }
            break;
        }
        }
        if (running_) {
            running_->node_times = opt_.node_times != nullptr &&
                                   (n->op() == Op::CallFunction || n->op() == Op::CallModule);
            if (!run_units(deadline)) return {};
            v = finish_running();
        }
        commit(n, std::move(v));
        return {};
    }

    // The node in flight: how far its kernel job has got (0 when none), so a
    // progress bar can move inside a long node.
    double node_fraction() const {
        if (!running_ || running_->job->units() == 0) return 0.0;
        return static_cast<double>(running_->job->units_done()) /
               static_cast<double>(running_->job->units());
    }

private:
    // A node paused inside its kernel (kernel_job.h): the job and everything its
    // units read, kept until the node is done or the run is dropped.
    struct Running {
        std::unique_ptr<CallArgs> args; // the call's values: the tensors the job reads
        std::unique_ptr<KernelJob> job;
        Value observed;                     // an observer's input (its value, passed through)
        std::shared_ptr<Observer> observer; // the observer the job updates
        const ConvFusion* fusion = nullptr; // a fused conv group: its later nodes' values
        std::vector<float> alpha, beta;     // the fused batch norm's coefficients [O]
        bool node_times = false;            // the node's time goes to opt_.node_times
        double ms = 0.0;                    // time in its units so far
    };

    // Runs units of the job in flight until it is done (true) or the deadline has passed.
    bool run_units(Clock::time_point deadline) {
        KernelJob& job = *running_->job;
        const Clock::time_point t0 = Clock::now();
        if (deadline == Clock::time_point::max()) {
            job.run_all();
        } else {
            while (!job.done()) {
                job.run_one();
                if (!job.done() && Clock::now() >= deadline) break;
            }
        }
        running_->ms += std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        return job.done();
    }

    // The finished job's value (and a fused group's values for its later nodes).
    Value finish_running() {
        std::unique_ptr<Running> r = std::move(running_);
        Node* n = plan_->nodes[step_];
        if (r->node_times) opt_.node_times->push_back({n, r->ms, false});
        if (r->observer) return std::move(r->observed);
        Value out = std::move(r->job->result);
        if (const ConvFusion* f = r->fusion) {
            // The values nothing outside the group reads stay none: the conv's, and
            // the batch norm's before a functional activation.
            const bool in_place =
                f->act && (f->act->is(OpId::hardtanh_) || f->act->is(OpId::relu_));
            if (f->bn) fused_[f->bn] = f->item || (f->act && !in_place) ? Value::none() : out;
            if (f->item) fused_[f->item] = f->act && !in_place ? Value::none() : out;
            if (f->act) fused_[f->act] = out;
            return Value::none();
        }
        return out;
    }

    void commit(Node* n, Value v) {
        if (opt_.on_value && n->op() != Op::Output) opt_.on_value(*n, v);
        if (computed(*n)) hold(v, +1);
        if (opt_.keep_values && n->op() != Op::Output &&
            (!opt_.keep_only || opt_.keep_only->count(n->name()))) {
            const uint64_t b = value_bytes(v);
            if (result_.values_kept_bytes + b <= keep_cap_) {
                Value kept =
                    opt_.keep_before_writes && v.is_tensor() && v.tensor && written_later(*n)
                        ? Value::of(Tensor(*v.tensor)) // its bytes, copied
                        : v;
                result_.values[n->name()] = kept;
                result_.values_kept_bytes += b;
                if (computed(*n)) hold(kept, +1); // kept: alive to the end of the run
            } else {
                ++result_.values_not_kept;
            }
        }
        env_[n] = std::move(v);
        if (step_ < plan_->release.size())
            for (const Node* m : plan_->release[step_]) {
                auto it = env_.find(m);
                if (it == env_.end()) continue;
                if (computed(*m)) hold(it->second, -1);
                env_.erase(it);
            }
        // The run's budget holds what is alive now: the inputs and the live results
        // (this node's scratch is gone with its kernel).
        budget_.set_bytes_used(base_bytes_ + live_bytes_);
        ++step_;
    }

    // Whether a user of n writes n's value in place (an (a!) argument: hardtanh_, relu_).
    static bool written_later(const Node& n) {
        for (const Node* u : n.users()) {
            const OpInfo* info = u->op_info();
            if (!info) continue;
            for (size_t k = 0; k < u->args().size(); ++k)
                if (u->args()[k].is_node() && u->args()[k].node == &n && info->writes(k))
                    return true;
        }
        return false;
    }
    static uint64_t value_bytes(const Value& v) {
        uint64_t b = v.kind == Value::Kind::Tensor && v.tensor ? v.tensor->storage.size() : 0;
        for (const Value& x : v.items) b += value_bytes(x);
        return b;
    }
    // A value a kernel made (and charged), not an input or module state.
    static bool computed(const Node& n) {
        return n.op() == Op::CallFunction || n.op() == Op::CallMethod || n.op() == Op::CallModule;
    }
    // Counts a value's tensors in or out of the live bytes; a tensor several
    // values share (in-place results, getitem, observers) counts once.
    void hold(const Value& v, int delta) {
        if (v.kind == Value::Kind::Tuple) {
            for (const Value& x : v.items) hold(x, delta);
            return;
        }
        if (v.kind != Value::Kind::Tensor || !v.tensor) return;
        Held& h = held_[v.tensor.get()];
        if (h.refs == 0) {
            h.bytes = v.tensor->storage.size();
            live_bytes_ += h.bytes;
        }
        h.refs += delta;
        if (h.refs <= 0) {
            live_bytes_ -= h.bytes;
            held_.erase(v.tensor.get());
        }
    }

    // Binds n and makes its kernel's job: running_ then holds it.
    Status start_job(const Node& n) {
        auto args = bind(n);
        if (!args.ok()) return args.error();
        auto r = std::make_unique<Running>();
        r->args = std::make_unique<CallArgs>(args.take());
        auto job = find_job(n)(*r->args, kernels_); // bind checked that it has a kernel
        if (!job.ok()) return node_error(n, job.error().message, job.error().hint);
        r->job = job.take();
        running_ = std::move(r);
        return {};
    }

private:
    Result<Value> eval(const Node& n, const Argument& a) {
        switch (a.kind) {
        case ArgKind::None: return Value::none();
        case ArgKind::Bool: return Value::boolean(a.b);
        case ArgKind::Int: return Value::integer(a.i);
        case ArgKind::Float: return Value::real(a.f);
        case ArgKind::NodeRef: {
            auto it = env_.find(a.node);
            if (it == env_.end())
                return node_error(n,
                                  "argument %" + a.node->name() +
                                      " has no value yet (graph not topologically ordered)",
                                  "run lint to find the problem");
            return it->second;
        }
        case ArgKind::List:
        case ArgKind::Tuple: {
            std::vector<Value> items;
            for (const Argument& x : a.items) {
                auto v = eval(n, x);
                if (!v.ok()) return v;
                items.push_back(v.take());
            }
            return Value::tuple(std::move(items));
        }
        case ArgKind::Dtype: {
            Value v;
            v.kind = Value::Kind::Dtype;
            v.dtype = a.dtype;
            return v;
        }
        case ArgKind::String: {
            Value v;
            v.kind = Value::Kind::String;
            v.s = a.s;
            return v;
        }
        case ArgKind::Device:
        case ArgKind::Layout:
        case ArgKind::MemoryFormat:
        case ArgKind::Dict:
        case ArgKind::Repr: {
            Value v;
            v.kind = Value::Kind::String;
            v.s = arg_repr(a);
            return v;
        }
        }
        return Value::none();
    }

    Result<Value> call_function(const Node& n) {
        auto args = bind(n);
        if (!args.ok()) return args.error();
        auto r = find_kernel(n)(args.value(), kernels_); // bind checked that it has one
        if (!r.ok()) return node_error(n, r.error().message, r.error().hint);
        if (Status s = write_back(n, r.value()); !s.ok())
            return node_error(n, s.error().message, s.error().hint);
        return r.take();
    }

    // An in-place write into a slice.Tensor's result writes the sliced tensor too
    // (export keeps torch's view semantics: zero_ of a slice of a clone), while its
    // base is still alive.
    Status write_back(const Node& n, const Value& v) {
        if (!n.op_info() || !n.op_info()->writes(0) || n.args().empty() || !n.args()[0].is_node() ||
            !v.is_tensor())
            return {};
        const Node& slice = *n.args()[0].node;
        if (!slice.is(OpId::slice_tensor) || slice.args().empty() || !slice.args()[0].is_node() ||
            !env_.count(slice.args()[0].node))
            return {};
        auto args = bind(slice);
        if (!args.ok()) return args.error();
        return write_back_slice(args.value(), *v.tensor);
    }

    // n's arguments in schema order (defaults filled in), after the checks every call makes.
    Result<CallArgs> bind(const Node& n) {
        const OpSchema* schema = n.schema();
        if (!schema)
            return node_error(n, "op " + n.target() + " is not in pt2lab's op schema table",
                              "pt2lab shows this node but cannot run it");
        if (!find_kernel(n))
            return node_error(n, "pt2lab has no kernel for " + schema->overload_str(),
                              "this op cannot run yet");
        const auto& sargs = schema->arguments;
        if (n.args().size() > sargs.size())
            return node_error(n, schema->overload_str() + " takes " + std::to_string(sargs.size()) +
                                     " arguments but " + std::to_string(n.args().size()) +
                                     " were given");
        std::vector<Value> bound(sargs.size());
        std::vector<bool> given(sargs.size(), false);
        for (size_t k = 0; k < n.args().size(); ++k) {
            auto v = eval(n, n.args()[k]);
            if (!v.ok()) return v.error();
            bound[k] = v.take();
            given[k] = true;
        }
        for (const auto& [key, arg] : n.kwargs()) {
            int idx = schema->arg_index(key);
            if (idx < 0)
                return node_error(n,
                                  schema->overload_str() + " has no argument named '" + key + "'");
            if (given[static_cast<size_t>(idx)])
                return node_error(n, "argument '" + key + "' is given twice");
            auto v = eval(n, arg);
            if (!v.ok()) return v.error();
            bound[static_cast<size_t>(idx)] = v.take();
            given[static_cast<size_t>(idx)] = true;
        }
        for (size_t k = 0; k < sargs.size(); ++k) {
            if (given[k]) continue;
            if (!sargs[k].has_default && !sargs[k].type.optional)
                return node_error(n, schema->overload_str() + " is missing its argument '" +
                                         sargs[k].name + "'");
            if (sargs[k].has_default) {
                auto v = eval(n, sargs[k].default_value);
                if (!v.ok()) return v.error();
                bound[k] = v.take();
            }
        }
        for (const Value& v : bound)
            if (const Tensor* t = foreign_dtype(v))
                return node_error(
                    n,
                    schema->overload_str() + ": pt2lab's executor does not compute in " +
                        std::string(scalar_type_name(t->dtype)) + " (" + t->type_str() + ")",
                    "it runs float32/float64, int64/int32, uint8, int8 and bool");
        return CallArgs(*schema, std::move(bound));
    }

    // Starts a fused group (conv_fusion.h) at its conv: the conv with the batch
    // norm and activation as its epilogue, as the job running_ holds; the group's
    // later nodes take their values from fused_ when they come. False when the
    // arguments are not what the fused kernel computes exactly (the nodes then
    // run one by one, as without fusion).
    bool start_fused(const ConvFusion& f) {
        // The later nodes read the conv (and the batch norm): a stand-in while binding.
        env_[f.conv] = Value::none();
        if (f.bn) env_[f.bn] = Value::none();
        if (f.item) env_[f.item] = Value::none();
        auto done = [&](bool started) {
            for (const Node* m : {f.conv, f.bn, f.item})
                if (m) env_.erase(m);
            return started;
        };
        auto conv_args = bind(*f.conv);
        if (!conv_args.ok()) return done(false);
        auto oc = conv_args.value().tensor(1); // the weight [O, C/groups, KH, KW]
        if (!oc.ok() || oc.value()->dim() != 4 || oc.value()->dtype != ScalarType::Float)
            return done(false);
        const int64_t O = oc.value()->sizes[0];
        ConvEpilogue ep;
        auto r = std::make_unique<Running>();
        std::vector<float>&alpha = r->alpha, &beta = r->beta; // kept while the job runs
        if (f.bn) {
            auto a = bind(*f.bn);
            if (!a.ok()) return done(false);
            const CallArgs& bn = a.value();
            const bool legit = f.bn->is(OpId::native_bn_no_training);
            if (!legit) { // batch_norm(..., bool training, float momentum, float eps, ...)
                auto training = bn.boolean(5);
                if (!training.ok() || training.value()) return done(false);
            }
            auto eps = bn.real(legit ? 6 : 7);
            if (!eps.ok()) return done(false);
            const float* per_channel[4] = {}; // weight, bias, running_mean, running_var
            for (size_t k = 1; k <= 4; ++k) {
                auto t = bn.opt_tensor(k);
                if (!t.ok()) return done(false);
                const Tensor* c = t.value().get();
                if (!c) {
                    if (k >= 3) return done(false); // eval needs the running stats
                    continue;
                }
                if (c->dtype != ScalarType::Float || c->dim() != 1 || c->numel() != O)
                    return done(false);
                per_channel[k - 1] = c->f32();
            }
            alpha.resize(static_cast<size_t>(O)), beta.resize(static_cast<size_t>(O));
            bn_eval_coefficients(per_channel[0], per_channel[1], per_channel[2], per_channel[3],
                                 eps.value(), O, alpha.data(), beta.data());
            ep.alpha = alpha.data(), ep.beta = beta.data();
        }
        if (f.act) {
            if (f.act->is(OpId::relu) || f.act->is(OpId::relu_)) {
                ep.act = ConvAct::Relu;
            } else { // its input (the conv, batch norm or getitem) has its stand-in
                auto a = bind(*f.act);
                if (!a.ok()) return done(false);
                auto lo = a.value().real(1), hi = a.value().real(2);
                if (!lo.ok() || !hi.ok()) return done(false);
                ep.act = ConvAct::Clamp;
                ep.lo = static_cast<float>(lo.value()), ep.hi = static_cast<float>(hi.value());
            }
        }
        r->args = std::make_unique<CallArgs>(conv_args.take());
        auto job = conv_with_epilogue_job(*r->args, f.conv->is(OpId::convolution), ep, kernels_);
        if (!job.ok()) return done(false); // the conv alone reports it
        r->job = job.take();
        r->fusion = &f;
        running_ = std::move(r);
        return done(true);
    }

    Result<Value> call_module(const Node& n) {
        if (n.target() == "_guards_fn") {
            if (!opt_.check_guards) return Value::none();
            size_t k = 0;
            for (const Argument& a : n.args()) {
                if (!a.is_node()) continue;
                const Node* ph = a.node;
                auto it = env_.find(ph);
                if (it == env_.end() || !it->second.is_tensor() || !ph->meta.val.is_tensor())
                    continue;
                const Tensor& t = *it->second.tensor;
                const TensorMeta& m = ph->meta.val.tensor;
                if (t.dim() != static_cast<int64_t>(m.sizes.size()))
                    return node_error(n,
                                      "Guard failed: " + ph->name() +
                                          ".dim() == " + std::to_string(m.sizes.size()),
                                      "the input's rank differs from the exported example's");
                for (size_t d = 0; d < m.sizes.size(); ++d) {
                    bool symbolic = d < m.symbolic_sizes.size() && !m.symbolic_sizes[d].empty();
                    if (!symbolic && t.sizes[d] != m.sizes[d])
                        return node_error(
                            n,
                            "Guard failed: " + ph->name() + ".size()[" + std::to_string(d) +
                                "] == " + std::to_string(m.sizes[d]),
                            "the program was exported with static shapes; give an input of shape " +
                                shape_str(m.sizes));
                }
                ++k;
            }
            return Value::none();
        }
        auto obs = state_.observers.find(n.target());
        if (obs != state_.observers.end()) {
            if (n.args().size() != 1) return node_error(n, "an observer takes exactly one input");
            auto v = eval(n, n.args()[0]);
            if (!v.ok()) return v.error();
            if (!v.value().is_tensor())
                return node_error(n, "an observer needs a tensor, got " + v.value().describe());
            // The observe runs as a job (running_), and the node's value is its input.
            auto r = std::make_unique<Running>();
            r->observed = v.take();
            r->observer = obs->second;
            auto job = r->observer->observe_job(*r->observed.tensor, kernels_.unit_work);
            if (!job.ok()) return node_error(n, job.error().message);
            r->job = job.take();
            running_ = std::move(r);
            return Value::none();
        }
        return node_error(
            n, "module '" + n.target() + "' cannot run",
            "pt2lab runs exported graphs, observers and _guards_fn; symbolic_trace module calls "
            "carry no weights");
    }

    const Graph& g_;
    ModuleState& state_;
    const RunOptions opt_; // a copy: a run may outlive the options it was started with
    Budget budget_;
    KernelOptions kernels_;
    std::map<const Node*, Value> env_;
    struct Held {
        uint64_t bytes = 0;
        int refs = 0;
    };
    std::unordered_map<const Tensor*, Held> held_; // the tensors of computed values in env_
    uint64_t live_bytes_ = 0, base_bytes_ = 0;
    uint64_t keep_cap_ = 0;              // bytes of values kept (RunOptions::keep_values_bytes)
    std::map<const Node*, Value> fused_; // values a fused conv computed for later nodes
    std::unique_ptr<Running> running_;   // the node paused inside, if any
    std::vector<Value> inputs_;
    std::shared_ptr<const RunPlan> plan_; // as of start()
    size_t step_ = 0, next_input_ = 0;
    RunResult result_;
};

// Count and dtype always; static shapes too unless a _guards_fn call will check them.
Status check_inputs(const Graph& g, const GraphSignature* sig, const std::vector<Tensor>& inputs,
                    bool shapes) {
    auto specs = user_input_specs(g, sig);
    if (inputs.size() != specs.size())
        return make_error("inputs",
                          "the program takes " + std::to_string(specs.size()) +
                              " user input(s), got " + std::to_string(inputs.size()),
                          "give one tensor per forward() argument");
    for (size_t k = 0; k < specs.size(); ++k) {
        const TensorMeta& m = specs[k].second;
        if (inputs[k].dtype != m.dtype)
            return make_error("input " + specs[k].first,
                              "expected dtype " + std::string(scalar_type_name(m.dtype)) +
                                  ", got " + std::string(scalar_type_name(inputs[k].dtype)));
        if (!shapes || (m.sizes.empty() && inputs[k].dim() == 0)) continue;
        if (inputs[k].dim() != static_cast<int64_t>(m.sizes.size()))
            return make_error("input " + specs[k].first,
                              "Unexpected number of dimensions in input at *args[" +
                                  std::to_string(k) + "].shape: expected " +
                                  std::to_string(m.sizes.size()) + ", but got " +
                                  std::to_string(inputs[k].dim()),
                              "the program was exported for inputs of shape " + shape_str(m.sizes));
        for (size_t d = 0; d < m.sizes.size(); ++d) {
            bool symbolic = d < m.symbolic_sizes.size() && !m.symbolic_sizes[d].empty();
            if (!symbolic && inputs[k].sizes[d] != m.sizes[d])
                return make_error(
                    "input " + specs[k].first,
                    "Expected input at *args[" + std::to_string(k) + "].shape[" +
                        std::to_string(d) + "] to be equal to " + std::to_string(m.sizes[d]) +
                        ", but got " + std::to_string(inputs[k].sizes[d]),
                    "the program was exported with static shapes " + shape_str(m.sizes));
        }
    }
    return {};
}

} // namespace

std::vector<Tensor> example_inputs(const ExportedProgram& ep) {
    std::vector<Tensor> in;
    for (const auto& t : ep.example_inputs) in.push_back(Tensor::from_data(t.tensor));
    return in;
}

Result<std::vector<Tensor>> seeded_inputs(const ExportedProgram& ep, uint64_t seed,
                                          const Limits& limits) {
    return seeded_inputs(*ep.graph, &ep.signature, seed, limits, ep.file_size);
}

Result<std::vector<Tensor>> seeded_inputs(const Graph& g, const GraphSignature* sig, uint64_t seed,
                                          const Limits& limits, uint64_t file_size) {
    SeededRng rng(seed);
    std::vector<Tensor> in;
    Budget budget(limits, Budget::Scope::Run, file_size);
    for (const auto& [name, meta] : user_input_specs(g, sig)) {
        if (!executor_dtype(meta.dtype))
            return make_error(
                "input " + name,
                "seeded inputs are float32/float64, int64/int32, uint8, int8 or bool; "
                "this input is " +
                    meta.type_str(),
                "give the input as a .npy file");
        if (Status s = budget.tensor(meta.sizes, scalar_type_size(meta.dtype), "input " + name);
            !s.ok())
            return s.error();
        Tensor t = Tensor::zeros(meta.dtype, meta.sizes);
        for (int64_t k = 0; k < t.numel(); ++k) t.set(k, rng.normal());
        in.push_back(std::move(t));
    }
    return in;
}

std::vector<std::pair<std::string, TensorMeta>> user_input_specs(const Graph& g,
                                                                 const GraphSignature* sig) {
    std::vector<std::pair<std::string, TensorMeta>> out;
    size_t k = 0;
    for (Node* n : g.placeholders()) {
        if (sig) {
            // The specs follow the placeholders' order (torch.export's rule): the k-th
            // first, a search only where a graph broke the rule (10k placeholders).
            const InputSpec* is = k < sig->inputs.size() && sig->inputs[k].arg == n->name()
                                      ? &sig->inputs[k]
                                      : sig->input_for(n->name());
            ++k;
            if (is && is->kind != InputKind::UserInput) continue;
        }
        out.emplace_back(n->name(), n->meta.val.is_tensor() ? n->meta.val.tensor : TensorMeta{});
    }
    return out;
}

bool run_fuses(const RunOptions& opt) {
    return !opt.keep_values && opt.kernels.fast_conv && opt.fuse_convs;
}

RunPlanning::RunPlanning(const Graph& g, bool fuse) : plan_(std::make_shared<RunPlan>()) {
    plan_->graph = &g;
    plan_->fused = fuse;
}

bool RunPlanning::step(size_t nodes) {
    RunPlan& p = *plan_;
    const Graph& g = *p.graph;
    for (size_t work = 0; work < nodes;) {
        switch (phase_) {
        case 0: // the nodes in order
            p.nodes = g.nodes();
            p.release.resize(p.nodes.size());
            positions_.emplace(g, p.nodes);
            phase_ = 1, next_ = 0, work += p.nodes.size() / 4 + 1;
            done_ = p.nodes.size();
            break;
        case 1: { // the last step that reads each value
            const size_t end = std::min(p.nodes.size(), next_ + (nodes - work));
            for (; next_ < end; ++next_, ++work, ++done_) {
                Node* n = p.nodes[next_];
                if (n->op() == Op::Output) continue;
                size_t last = next_;
                for (const Node* u : n->users())
                    if (size_t at = positions_->of(u); at != NodePositions::npos)
                        last = std::max(last, at);
                p.release[last].push_back(n);
            }
            if (next_ >= p.nodes.size()) phase_ = p.fused ? 2 : 3, next_ = 0;
            break;
        }
        case 2: { // the conv groups
            size_t before = next_;
            while (next_ < p.nodes.size() && work < nodes) {
                next_ = plan_conv_fusion_at(p.nodes, next_, p.fusions);
                work += next_ - before, done_ += next_ - before, before = next_;
            }
            if (next_ >= p.nodes.size()) phase_ = 3;
            break;
        }
        default: done_ = total(); return true;
        }
    }
    return phase_ == 3;
}

std::shared_ptr<const RunPlan> RunPlanning::take() {
    PT2LAB_CHECK(phase_ == 3); // take() of a plan not yet whole
    positions_.reset();
    return std::move(plan_);
}

struct Execution::Impl {
    Impl(const Graph& g, ModuleState& state, const RunOptions& opt) : runner(g, state, opt) {}
    Runner runner;
    ModuleState* state = nullptr;
    const ExportedProgram* ep = nullptr; // of_program: buffer mutations are written back
};

Execution::Execution(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
}
Execution::~Execution() = default;

std::unique_ptr<Execution> Execution::of_graph(const Graph& g, std::vector<Value> inputs,
                                               ModuleState& state, const RunOptions& opt) {
    auto impl = std::make_unique<Impl>(g, state, opt);
    impl->state = &state;
    impl->runner.start(std::move(inputs));
    return std::unique_ptr<Execution>(new Execution(std::move(impl)));
}

Result<std::unique_ptr<Execution>> Execution::of_program(const ExportedProgram& ep,
                                                         ModuleState& state,
                                                         const std::vector<Tensor>& inputs,
                                                         const RunOptions& opt) {
    if (Status s = check_inputs(*ep.graph, &ep.signature, inputs, true); !s.ok()) return s.error();
    std::vector<Value> values;
    size_t next_user = 0;
    for (const InputSpec& is : ep.signature.inputs) {
        if (is.kind == InputKind::UserInput) {
            values.push_back(Value::of(inputs[next_user++]));
            continue;
        }
        auto it = state.tensors.find(is.target);
        if (it == state.tensors.end())
            return make_error("%" + is.arg,
                              "no value for " + std::string(input_kind_name(is.kind)) + " " +
                                  is.target,
                              "the program's weights are missing");
        values.push_back(Value::of(it->second)); // shared: in-place ops update the state
    }
    auto e = of_graph(*ep.graph, std::move(values), state, opt);
    e->impl_->ep = &ep;
    return e;
}

Result<std::unique_ptr<Execution>> Execution::of_module(const GraphModule& gm, ModuleState& state,
                                                        const std::vector<Tensor>& inputs,
                                                        const RunOptions& opt) {
    if (!opt.observers_ready) state.add_missing_observers(gm);
    const Graph& g = gm.forward_graph(); // as torch: the code of the last recompile()
    // Like torch: _guards_fn checks shapes when present, else a forward pre-hook does.
    bool has_guards = g.find("_guards_fn") != nullptr && opt.check_guards;
    if (Status s = check_inputs(g, nullptr, inputs, !has_guards); !s.ok()) return s.error();
    std::vector<Value> values;
    for (const Tensor& t : inputs) values.push_back(Value::of(t));
    return of_graph(g, std::move(values), state, opt);
}

bool Execution::done() const {
    return impl_->runner.finished();
}
size_t Execution::nodes_done() const {
    return impl_->runner.done();
}
size_t Execution::nodes_total() const {
    return impl_->runner.total();
}

double Execution::node_fraction() const {
    return impl_->runner.node_fraction();
}

Status Execution::advance(std::chrono::steady_clock::time_point deadline) {
    while (!impl_->runner.finished()) {
        if (Status s = impl_->runner.step(deadline); !s.ok()) return s;
        if (std::chrono::steady_clock::now() >= deadline) break;
    }
    return {};
}

Status Execution::advance() {
    while (!impl_->runner.finished())
        if (Status s = impl_->runner.step(std::chrono::steady_clock::time_point::max()); !s.ok())
            return s;
    return {};
}

Result<RunResult> Execution::finish() {
    PT2LAB_CHECK(done());
    RunResult r = impl_->runner.take_result();
    const ExportedProgram* ep = impl_->ep;
    if (!ep) return r;
    ModuleState& state = *impl_->state;
    RunResult out;
    out.values = std::move(r.values);
    for (size_t k = 0; k < ep->signature.outputs.size() && k < r.outputs.size(); ++k) {
        const OutputSpec& os = ep->signature.outputs[k];
        const Value& v = r.outputs[k];
        if (os.kind == OutputKind::BufferMutation || os.kind == OutputKind::ParameterMutation) {
            auto it = state.tensors.find(os.target);
            if (it == state.tensors.end() || !v.is_tensor())
                return make_error("output " + os.arg,
                                  "cannot write the new value of " + os.target + " back");
            // The new value must be the buffer's shape and dtype: later runs (and
            // kernels reading it) rely on its size.
            if (v.tensor->dtype != it->second->dtype || v.tensor->sizes != it->second->sizes)
                return make_error("output " + os.arg,
                                  "the new value of " + os.target + " is " + v.tensor->type_str() +
                                      ", but the buffer is " + it->second->type_str(),
                                  "a buffer mutation keeps the buffer's shape and dtype; the "
                                  "graph is inconsistent");
            it->second->storage = v.tensor->storage; // the buffer takes its new value
            continue;
        }
        if (os.kind == OutputKind::UserOutput || os.kind == OutputKind::LossOutput) {
            out.outputs.push_back(v);
            out.output_names.push_back(r.output_names[k]);
        }
    }
    return out;
}

namespace {

Result<RunResult> run_to_end(Result<std::unique_ptr<Execution>> e) {
    if (!e.ok()) return e.error();
    if (Status s = e.value()->advance(); !s.ok()) return s.error();
    return e.value()->finish();
}

} // namespace

Result<RunResult> run_graph(const Graph& g, const std::vector<Value>& inputs, ModuleState& state,
                            const RunOptions& opt) {
    return run_to_end(Execution::of_graph(g, inputs, state, opt));
}

Result<RunResult> run_program(const ExportedProgram& ep, ModuleState& state,
                              const std::vector<Tensor>& inputs, const RunOptions& opt) {
    return run_to_end(Execution::of_program(ep, state, inputs, opt));
}

Result<RunResult> run_module(const GraphModule& gm, ModuleState& state,
                             const std::vector<Tensor>& inputs, const RunOptions& opt) {
    return run_to_end(Execution::of_module(gm, state, inputs, opt));
}

} // namespace pt2lab
