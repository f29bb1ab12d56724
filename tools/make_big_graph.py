"""Synthetic ExportedProgram JSON files of a chosen size for the page benchmark
(tools/big_bench.js) and the big-graph browser tests; generated, never committed.
The shape follows exported CNNs: a stem, stages of residual blocks (conv -> relu
-> conv -> add(skip) -> relu), every fourth block a three-branch fan-out joined
by adds, lifted parameters as placeholders, and nn_module_stack paths
(stages.S.B.conv1) on every call, like torch.export writes them.
    /usr/bin/python3 tools/make_big_graph.py OUT.json NODES [BLOCKS_PER_STAGE]"""
import json
import sys

C, H = 4, 8  # channels and spatial size: small, so stand-in weights stay small


def tensor(sizes):
    strides, s = [], 1
    for d in reversed(sizes):
        strides.insert(0, s)
        s *= d
    return {"dtype": 7, "sizes": [{"as_int": d} for d in sizes], "requires_grad": False,
            "device": {"type": "cpu", "index": None}, "strides": [{"as_int": d} for d in strides],
            "storage_offset": {"as_int": 0}, "layout": 7}


class Builder:
    def __init__(self):
        self.nodes, self.values, self.params, self.names = [], {}, [], set()

    def name(self, base):
        n, k = base, 1
        while n in self.names:
            n, k = f"{base}_{k}", k + 1
        self.names.add(n)
        return n

    def param(self, path, sizes):
        n = self.name("p_" + path.replace(".", "_"))
        self.values[n] = tensor(sizes)
        self.params.append((n, path))
        return n

    def call(self, target, base, args, sizes, stack):
        n = self.name(base)
        inputs = []
        for arg_name, a in args:
            if isinstance(a, str):
                arg = {"as_tensor": {"name": a}}
            elif isinstance(a, list) and a and isinstance(a[0], str):
                arg = {"as_tensors": [{"name": t} for t in a]}
            elif isinstance(a, list):
                arg = {"as_ints": a}
            elif a is None:
                arg = {"as_none": True}
            else:
                arg = {"as_int": a}
            inputs.append({"name": arg_name, "arg": arg, "kind": 1})
        stack_text = ";".join(f"{k},{p},{t}" for k, p, t in stack)
        self.nodes.append({"target": target, "inputs": inputs,
                           "outputs": [{"as_tensor": {"name": n}}],
                           "metadata": {"nn_module_stack": stack_text},
                           "is_hop_single_tensor_return": None, "name": n})
        self.values[n] = tensor(sizes)
        return n

    def count(self):
        return len(self.nodes) + len(self.params) + 2  # + the input and the output node


def key(path):
    return "L__self__" + ("_" + path.replace(".", "_") if path else "")


def build(target_nodes, per_stage):
    b = Builder()
    root = [(key(""), "", "bench.BigNet")]
    act = [1, C, H, H]

    def conv(x, mod, stack, k=3, cin=C):
        w = b.param(mod + ".weight", [C, cin, k, k])
        st = stack + [(key(mod), mod, "torch.nn.modules.conv.Conv2d")]
        return b.call("torch.ops.aten.conv2d.default", "conv2d",
                      [("input", x), ("weight", w), ("bias", None), ("stride", [1, 1]),
                       ("padding", [k // 2, k // 2])], act, st)

    def relu(x, mod, stack):
        st = stack + [(key(mod), mod, "torch.nn.modules.activation.ReLU")]
        return b.call("torch.ops.aten.relu.default", "relu", [("self", x)], act, st)

    x = "x"
    x = conv(x, "stem.conv", root + [(key("stem"), "stem", "torch.nn.Sequential")])
    x = relu(x, "stem.act", root + [(key("stem"), "stem", "torch.nn.Sequential")])
    block = 0
    while b.count() < target_nodes - 5:
        s, j = divmod(block, per_stage)
        stage = f"stages.{s}"
        path = f"{stage}.{j}"
        mixed = block % 4 == 3
        st = root + [(key(stage), stage, "torch.nn.Sequential"),
                     (key(path), path, "bench.Mixed" if mixed else "bench.Block")]
        if mixed:  # fan-out: three branches summed, then a 1x1 conv
            br = [conv(x, f"{path}.branch{i}", st, k=1 + 2 * (i % 2)) for i in range(3)]
            y = b.call("torch.ops.aten.add.Tensor", "add", [("self", br[0]), ("other", br[1])],
                       act, st)
            y = b.call("torch.ops.aten.add.Tensor", "add", [("self", y), ("other", br[2])], act, st)
            y = conv(y, f"{path}.project", st, k=1)
            x = relu(y, f"{path}.act", st)
        else:
            y = conv(x, f"{path}.conv1", st)
            y = relu(y, f"{path}.act1", st)
            y = conv(y, f"{path}.conv2", st)
            y = b.call("torch.ops.aten.add.Tensor", "add", [("self", y), ("other", x)], act, st)
            x = relu(y, f"{path}.act2", st)
        block += 1
    pooled = b.call("torch.ops.aten.mean.dim", "mean",
                    [("self", x), ("dim", [2, 3])], [1, C], root)
    fw, fb = b.param("fc.weight", [10, C]), b.param("fc.bias", [10])
    out = b.call("torch.ops.aten.linear.default", "linear",
                 [("input", pooled), ("weight", fw), ("bias", fb)], [1, 10],
                 root + [(key("fc"), "fc", "torch.nn.modules.linear.Linear")])
    b.values["x"] = tensor(act)
    inputs = [{"as_tensor": {"name": n}} for n, _ in b.params] + [{"as_tensor": {"name": "x"}}]
    specs = [{"parameter": {"arg": {"name": n}, "parameter_name": p}} for n, p in b.params]
    specs.append({"user_input": {"arg": {"as_tensor": {"name": "x"}}}})
    graph = {"inputs": inputs, "outputs": [{"as_tensor": {"name": out}}], "nodes": b.nodes,
             "tensor_values": b.values, "sym_int_values": {}, "sym_bool_values": {},
             "is_single_tensor_return": False, "custom_obj_values": {}, "sym_float_values": {}}
    return {"graph_module": {"graph": graph,
                             "signature": {"input_specs": specs, "output_specs": [
                                 {"user_output": {"arg": {"as_tensor": {"name": out}}}}]},
                             "module_call_graph": [], "metadata": {},
                             "treespec_namedtuple_fields": {}},
            "opset_version": {"aten": 10}, "range_constraints": {},
            "schema_version": {"major": 8, "minor": 20}, "verifiers": ["TRAINING"],
            "torch_version": "2.14.1+debian", "guards_code": []}, b.count()


def main():
    out, n = sys.argv[1], int(sys.argv[2])
    per_stage = int(sys.argv[3]) if len(sys.argv) > 3 else 16
    ep, count = build(n, per_stage)
    with open(out, "w") as f:
        json.dump(ep, f, separators=(",", ":"))
    print(f"{out}: {count} nodes")


if __name__ == "__main__":
    main()
