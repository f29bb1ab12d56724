"""Writes the loader's test corpus: tests/corpus/bad/* (each must fail with a
clear message) and tests/corpus/good/* (other layouts that must load).

Every file is derived from a lesson asset (mostly assets/graphs/conv_relu.pt2)
by one deliberate change, or is a small hand-built ExportedProgram JSON (the
executor cases). tests/corpus/expected.json is the specification the tests
check: for each bad file, the phrases the first error on the page's drop path
must contain (the file name is always required too) and the stage of that path
where it must happen ("load", "inputs", "run", ...; tests/support/drop_file.h);
for each good file, the warnings it must carry.

The bad files cover every class of hostile input in issue 10: deep nesting,
claimed sizes that would exhaust memory, arithmetic overflow, degenerate
shapes for the executor, quadratic work, malformed .npy headers, names that
would inject code, and messages that used to mislead.

    python3 tools/make_corpus.py           # (re)write the corpus
    python3 tools/make_corpus.py --check   # verify the committed corpus is current

Plain Python (no torch); zips are written with fixed timestamps so the bytes
are the same on every run.
"""
import argparse
import base64
import copy
import io
import json
import os
import pickle
import struct
import sys
import zipfile
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASE = os.path.join(ROOT, "assets", "graphs", "conv_relu.pt2")
FIXED_TIME = (1980, 1, 1, 0, 0, 0)


def read_base():
    """Returns (prefix, {relative name: bytes}) of the base archive, in order."""
    with zipfile.ZipFile(BASE) as z:
        names = z.namelist()
        prefix = names[0].split("/")[0] + "/"
        return prefix, {n[len(prefix):]: z.read(n) for n in names}


def zip_bytes(records, prefix="conv_relu/", compression=zipfile.ZIP_STORED):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in records.items():
            info = zipfile.ZipInfo(prefix + name, date_time=FIXED_TIME)
            info.compress_type = compression
            info.external_attr = 0o644 << 16
            z.writestr(info, data)
    return buf.getvalue()


def with_model(records, edit):
    """Copy of records with models/model.json changed by edit(dict)."""
    out = dict(records)
    model = json.loads(records["models/model.json"])
    edit(model)
    out["models/model.json"] = json.dumps(model).encode()
    return out


def with_json(records, name, edit):
    out = dict(records)
    obj = json.loads(records[name])
    edit(obj)
    out[name] = json.dumps(obj).encode()
    return out


def nodes(model):
    return model["graph_module"]["graph"]["nodes"]


def node(model, target_suffix):
    return next(n for n in nodes(model) if n["target"].endswith(target_suffix))


def patch_eocd(data, field_offset, fmt, value):
    eocd = data.rfind(b"PK\x05\x06")
    out = bytearray(data)
    struct.pack_into(fmt, out, eocd + field_offset, value)
    return bytes(out)


def flip_byte_in(data, record_name):
    """Flips one byte inside a stored record's data (CRC must then fail)."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        info = z.getinfo(record_name)
    off = info.header_offset
    name_len, extra_len = struct.unpack_from("<HH", data, off + 26)
    start = off + 30 + name_len + extra_len
    out = bytearray(data)
    out[start + info.file_size // 2] ^= 0x20
    return bytes(out)


# --- hand-built programs and raw zip surgery (issue 10's classes) ------------------

F32, I64, F16, I8 = 7, 5, 6, 2  # ScalarType codes of torch/_export/serde/schema.py


def read_asset(name):
    """(prefix, {relative name: bytes}) of assets/graphs/<name>.pt2."""
    with zipfile.ZipFile(os.path.join(ROOT, "assets", "graphs", name + ".pt2")) as z:
        names = z.namelist()
        prefix = names[0].split("/")[0] + "/"
        return prefix, {n[len(prefix):]: z.read(n) for n in names}


def tensor_meta(sizes, dtype=F32, strides=None):
    """A schema-8 TensorMeta; sizes items are ints or ready-made SymInt objects."""
    plain = [s for s in sizes if isinstance(s, int)]
    if strides is None:
        strides, acc = [], 1
        if len(plain) == len(sizes) and all(0 <= s < 2 ** 31 for s in plain):
            for s in reversed(plain):
                strides.insert(0, acc)
                acc *= max(s, 1)
        else:
            strides = [1] * len(sizes)
    sym = lambda v: v if isinstance(v, dict) else {"as_int": v}
    return {"dtype": dtype, "sizes": [sym(s) for s in sizes], "requires_grad": False,
            "device": {"type": "cpu", "index": None}, "strides": [sym(s) for s in strides],
            "storage_offset": {"as_int": 0}, "layout": 7}


def tensor_arg(name):
    return {"as_tensor": {"name": name}}


def mini_program(template, inputs, nodes, outputs, buffers=(), mutations=()):
    """A bare ExportedProgram JSON (bytes) on the template's top-level fields.

    inputs:  [(name, sizes, dtype)] user inputs (seeded by the drop path: no extras)
    buffers: [(placeholder, fqn, sizes)] float32 buffers (stand-in values)
    nodes:   [(target, [(arg name, arg json)], output name, output sizes, output dtype)]
    outputs: [name]; mutations: [(output name, buffer fqn)] come first, as torch orders them
    """
    m = copy.deepcopy(json.loads(template))
    values, graph_inputs, specs = {}, [], []
    for ph, fqn, sizes in buffers:
        graph_inputs.append(tensor_arg(ph))
        values[ph] = tensor_meta(sizes)
        specs.append({"buffer": {"arg": {"name": ph}, "buffer_name": fqn, "persistent": True}})
    for name, sizes, dtype in inputs:
        graph_inputs.append(tensor_arg(name))
        values[name] = tensor_meta(sizes, dtype)
        specs.append({"user_input": {"arg": tensor_arg(name)}})
    graph_nodes = []
    for target, args, out, sizes, dtype in nodes:
        graph_nodes.append({"target": target,
                            "inputs": [{"name": n, "arg": a, "kind": 1} for n, a in args],
                            "outputs": [tensor_arg(out)], "metadata": {},
                            "is_hop_single_tensor_return": None})
        values[out] = tensor_meta(sizes, dtype)
    out_specs = [{"buffer_mutation": {"arg": tensor_arg(o), "buffer_name": fqn}} for o, fqn in mutations]
    out_specs += [{"user_output": {"arg": tensor_arg(o)}} for o in outputs]
    g = m["graph_module"]["graph"]
    g.update({"inputs": graph_inputs, "nodes": graph_nodes, "tensor_values": values,
              "outputs": [tensor_arg(o) for o, _ in mutations] + [tensor_arg(o) for o in outputs],
              "is_single_tensor_return": False})
    m["graph_module"]["signature"] = {"input_specs": specs, "output_specs": out_specs}
    m["graph_module"]["module_call_graph"] = []
    return json.dumps(m).encode()


def npy_bytes(header, data=b"", version=1, header_len=None):
    """A .npy file with a literal header dict text (padded like numpy.save)."""
    h = header.encode("latin1")
    pad = (64 - (10 + len(h) + 1) % 64) % 64
    h = h + b" " * pad + b"\n"
    n = len(h) if header_len is None else header_len
    if version == 1:
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", n) + h + data
    return b"\x93NUMPY" + bytes([version, 0]) + struct.pack("<I", n) + h + data


def deep_text(depth, leaf="1"):
    return "[" * depth + leaf + "]" * depth


def replace_once(data, old, new):
    assert data.count(old) == 1, old
    return data.replace(old, new)


def zip_records(data):
    """[(name, local header offset, central record offset)] of a plain zip."""
    eocd = data.rfind(b"PK\x05\x06")
    count, cd_size, cd_off = struct.unpack_from("<HII", data, eocd + 10)
    out, p = [], cd_off
    for _ in range(count):
        name_len, extra_len, comment_len = struct.unpack_from("<HHH", data, p + 28)
        (local,) = struct.unpack_from("<I", data, p + 42)
        out.append((data[p + 46:p + 46 + name_len].decode(), local, p))
        p += 46 + name_len + extra_len + comment_len
    return out


def patch_central(data, name, field_offset, fmt, value):
    """Changes one field of `name`'s central directory record (CRCs stay right)."""
    for n, _, p in zip_records(data):
        if n == name:
            out = bytearray(data)
            struct.pack_into(fmt, out, p + field_offset, value)
            return bytes(out)
    raise KeyError(name)


def build():
    """Returns {relative path: bytes} and the expectations."""
    prefix, rec = read_base()
    base = open(BASE, "rb").read()
    files, expect = {}, {"bad": {}, "good": {}}

    def bad(name, data, *phrases, stage="load"):
        assert "bad/" + name not in files, name
        files["bad/" + name] = data
        expect["bad"][name] = {"message": list(phrases), "stage": stage}

    def good(name, data, *warnings):
        files["good/" + name] = data
        expect["good"][name] = list(warnings)

    # --- not a zip / broken zip -------------------------------------------------
    bad("empty.pt2", b"", "the file is empty")
    bad("plain_text.pt2", b"hello, this is not a model\n", "not a PT2 archive or ExportedProgram JSON")
    bad("png_magic.pt2", b"\x89PNG\r\n\x1a\n" + bytes(64), "first bytes 89 50 4e 47")
    bad("truncated_half.pt2", base[: len(base) // 2], "truncated")
    bad("truncated_tail.pt2", base[:-7], "truncated")
    bad("tiny_zip_header.pt2", base[:12], "truncated")
    bad("bad_crc.pt2", flip_byte_in(base, prefix + "models/model.json"), "models/model.json", "CRC mismatch")
    bad("central_directory_past_end.pt2", patch_eocd(zip_bytes(rec), 16, "<I", 10 ** 8),
        "central directory", "past the end")
    bad("bzip2_record.pt2", zip_bytes(rec, compression=zipfile.ZIP_BZIP2), "compression method 12")
    bad("not_a_pt2_zip.pt2", zip_bytes({"readme.txt": b"just a zip\n"}, prefix=""),
        "not a PT2 archive", "models/model.json")
    no_model = {k: v for k, v in rec.items() if k != "models/model.json"}
    bad("archive_without_model.pt2", zip_bytes(no_model), "has no models/model.json")

    # --- model.json ---------------------------------------------------------------
    broken = dict(rec)
    broken["models/model.json"] = rec["models/model.json"][:-40]
    bad("invalid_json.pt2", zip_bytes(broken), "models/model.json", "invalid JSON")
    bad("schema_major_99.pt2",
        zip_bytes(with_model(rec, lambda m: m.__setitem__("schema_version", {"major": 99, "minor": 0}))),
        "unknown schema major version 99", "$.schema_version")
    bad("no_graph_module.pt2", zip_bytes(with_model(rec, lambda m: m.pop("graph_module"))),
        "no \"graph_module\" key")
    bad("no_nodes.pt2", zip_bytes(with_model(rec, lambda m: m["graph_module"]["graph"].pop("nodes"))),
        "missing key \"nodes\"", "$.graph_module.graph")

    def dangling(m):
        node(m, "relu.default")["inputs"][0]["arg"] = {"as_tensor": {"name": "conv2d_typo"}}
    bad("dangling_reference.pt2", zip_bytes(with_model(rec, dangling)),
        "undefined value \"conv2d_typo\"", "nodes[1].inputs[0].arg")

    def malformed(m):
        node(m, "conv2d.default")["inputs"][3]["arg"] = {"as_ints": [1, "one"]}
    bad("malformed_argument.pt2", zip_bytes(with_model(rec, malformed)), "expected an integer", "as_ints[1]")

    def unknown_kind(m):
        node(m, "conv2d.default")["inputs"][4]["arg"] = {"as_banana": [1, 1]}
    bad("unknown_argument_kind.pt2", zip_bytes(with_model(rec, unknown_kind)), "unknown argument kind \"as_banana\"")

    def two_keys(m):
        node(m, "conv2d.default")["inputs"][3]["arg"] = {"as_ints": [1, 1], "as_int": 1}
    bad("argument_two_kinds.pt2", zip_bytes(with_model(rec, two_keys)), "expected exactly one key")

    def duplicate(m):
        nodes(m)[0]["outputs"][0]["as_tensor"]["name"] = "x"
    bad("duplicate_names.pt2", zip_bytes(with_model(rec, duplicate)), "duplicate name \"x\"")

    def bad_dtype(m):
        m["graph_module"]["graph"]["tensor_values"]["relu"]["dtype"] = 99
    bad("unknown_dtype_code.pt2", zip_bytes(with_model(rec, bad_dtype)), "unknown dtype code 99", "tensor_values.relu")

    def fewer_specs(m):
        m["graph_module"]["signature"]["input_specs"].pop(0)
    bad("signature_mismatch.pt2", zip_bytes(with_model(rec, fewer_specs)),
        "the signature lists 2 inputs but the graph has 3 placeholders")

    def unknown_spec(m):
        specs = m["graph_module"]["signature"]["input_specs"]
        specs[0] = {"mystery": specs[0]["parameter"]}
    bad("unknown_input_spec.pt2", zip_bytes(with_model(rec, unknown_spec)), "unknown input spec kind \"mystery\"")

    def missing_weight_arg(m):
        n = node(m, "conv2d.default")
        n["inputs"] = [i for i in n["inputs"] if i["name"] != "weight"]
    bad("missing_required_argument.pt2", zip_bytes(with_model(rec, missing_weight_arg)),
        "missing required argument \"weight\"", "aten.conv2d.default")

    def extra_arg(m):
        node(m, "relu.default")["inputs"].append({"name": "banana", "arg": {"as_int": 1}, "kind": 1})
    bad("unexpected_argument.pt2", zip_bytes(with_model(rec, extra_arg)), "unexpected argument \"banana\"")

    def bad_stack(m):
        node(m, "relu.default")["metadata"]["nn_module_stack"] = "only-one-field"
    bad("malformed_module_stack.pt2", zip_bytes(with_model(rec, bad_stack)),
        "expected \"key,path,type\"", "metadata.nn_module_stack")

    def bad_output(m):
        m["graph_module"]["graph"]["outputs"] = [{"as_tensor": {"name": "nowhere"}}]
    bad("dangling_output.pt2", zip_bytes(with_model(rec, bad_output)), "undefined value \"nowhere\"", "graph.outputs[0]")

    # --- weights ------------------------------------------------------------------
    short = dict(rec)
    short["data/weights/weight_0"] = rec["data/weights/weight_0"][:100]
    bad("weight_size_mismatch.pt2", zip_bytes(short), "weight size mismatch", "needs 864 bytes")

    def wrong_shape(c):
        c["config"]["conv.weight"]["tensor_meta"]["sizes"] = [9, 3, 3, 3]
        c["config"]["conv.weight"]["tensor_meta"]["strides"] = [27, 9, 3, 1]
    grown = with_json(rec, "data/weights/model_weights_config.json", wrong_shape)
    grown["data/weights/weight_0"] = rec["data/weights/weight_0"] + bytes(108)
    bad("weight_shape_differs_from_graph.pt2", zip_bytes(grown), "weight size mismatch", "the graph expects f32[8, 3, 3, 3]")

    def dangling_weight(c):
        c["config"]["conv.weight"]["path_name"] = "weight_99"
    bad("weight_file_missing.pt2", zip_bytes(with_json(rec, "data/weights/model_weights_config.json", dangling_weight)),
        "data/weights/weight_99", "not in the archive")

    def drop_param(c):
        c["config"].pop("conv.bias")
    bad("weight_not_listed.pt2", zip_bytes(with_json(rec, "data/weights/model_weights_config.json", drop_param)),
        "no stored value for PARAMETER conv.bias")
    cfg_broken = dict(rec)
    cfg_broken["data/weights/model_weights_config.json"] = b"{\"config\": {"
    bad("weights_config_invalid_json.pt2", zip_bytes(cfg_broken), "model_weights_config.json", "invalid JSON")
    no_cfg = {k: v for k, v in rec.items() if k != "data/weights/model_weights_config.json"}
    bad("weights_config_missing.pt2", zip_bytes(no_cfg), "has no weights config")

    # --- extras -------------------------------------------------------------------
    bad_b64 = dict(rec)
    bad_b64["extra/pt2lab/output_0.npy.b64"] = b"not base64!"
    bad("extra_bad_base64.pt2", zip_bytes(bad_b64), "output_0.npy.b64", "not base64 text")
    bad_npy = dict(rec)
    bad_npy["extra/pt2lab/output_0.npy.b64"] = base64.b64encode(b"not numpy")
    bad("extra_bad_npy.pt2", zip_bytes(bad_npy), "output_0.npy.b64", "not a .npy file")

    # --- bare JSON ----------------------------------------------------------------
    bad("bare_invalid.json", rec["models/model.json"][:200], "invalid JSON", "bare_invalid.json")
    bad("bare_array.json", b"[1, 2, 3]\n", "expected a JSON object")

    # --- symbolic_trace graph JSON --------------------------------------------------
    fx = json.loads(open(os.path.join(ROOT, "assets", "fx", "conv_relu.json")).read())
    fx_dangling = copy.deepcopy(fx)
    fx_dangling["nodes"][1]["args"] = [{"node": "ghost"}]
    bad("fx_dangling_reference.json", json.dumps(fx_dangling).encode(), "undefined node \"ghost\"", "$.nodes[1].args[0]")
    fx_opcode = copy.deepcopy(fx)
    fx_opcode["nodes"][1]["op"] = "call_magic"
    bad("fx_unknown_opcode.json", json.dumps(fx_opcode).encode(), "unknown opcode \"call_magic\"", "$.nodes[1].op")


    # === issue 10: hostile files ====================================================
    model_text = rec["models/model.json"]
    model = json.loads(model_text)

    # --- deep nesting: refused before any reader recurses ----------------------------
    def deep_arg(depth):
        m = copy.deepcopy(model)
        node(m, "conv2d.default")["inputs"][3]["arg"] = {"as_ints": "DEEP"}
        return replace_once(json.dumps(m).encode(), b'"DEEP"', deep_text(depth).encode())
    bad("deep_nesting_argument.pt2", zip_bytes({**rec, "models/model.json": deep_arg(100000)}),
        "models/model.json", "nested deeper than 256 levels", "$.graph_module.graph.nodes[0]",
        "more levels")
    bad("deep_nesting_bare.json", b'{"graph_module": {"graph": ' + deep_text(20000).encode() + b"}}",
        "nested deeper than 256 levels", "$.graph_module.graph")
    bad("deep_nesting_objects.json", b'{"a": ' * 50000 + b"1" + b"}" * 50000,
        "nested deeper than 256 levels", "$.a.a.a")
    bad("deep_nesting_weights_config.pt2",
        zip_bytes({**rec, "data/weights/model_weights_config.json":
                   b'{"config": ' + deep_text(10000).encode() + b"}"}),
        "model_weights_config.json", "nested deeper than 256 levels")
    bad("deep_nesting_manifest.pt2",
        zip_bytes({**rec, "extra/pt2lab/manifest.json": b'{"inputs": ' + deep_text(300).encode() + b"}"}),
        "manifest.json", "nested deeper than 256 levels")
    # 247 levels pass the guard; the union-key error previews the value in bounded time.
    prev = copy.deepcopy(model)
    node(prev, "conv2d.default")["inputs"][3]["arg"] = {"as_ints": [1, 1], "as_int": "DEEP"}
    bad("error_preview_of_deep_value.pt2", zip_bytes({**rec, "models/model.json": replace_once(
        json.dumps(prev).encode(), b'"DEEP"', deep_text(240).encode())}),
        "expected exactly one key", "[[[[")
    fx = json.loads(open(os.path.join(ROOT, "assets", "fx", "conv_relu.json")).read())
    fx_deep = copy.deepcopy(fx)
    fx_deep["nodes"][1]["args"] = [{"node": "x"}, "DEEP"]
    bad("fx_deep_args.json", replace_once(json.dumps(fx_deep).encode(), b'"DEEP"',
                                          deep_text(5000).encode()),
        "nested deeper than 256 levels", "$.nodes[1].args[1]")

    # --- claimed sizes: budgets refuse before allocating -----------------------------
    bare = rec["models/model.json"]
    def placeholder_shape(sizes):
        def edit(m):
            m["graph_module"]["graph"]["tensor_values"]["p_conv_weight"] = tensor_meta(sizes)
        return with_json({"m": bare}, "m", edit)["m"]
    bad("stand_in_65536_squared.json", placeholder_shape([65536, 65536]),
        "stand-in values for conv.weight", "16.0 GiB", "more than the 256.0 MiB pt2lab accepts for one tensor",
        "--limit tensor-mb=N")
    bad("stand_in_1e9_squared.json", placeholder_shape([10 ** 9, 10 ** 9]),
        "stand-in values for conv.weight", "pt2lab accepts for one tensor")
    many = mini_program(bare, [("x", [4], F32)], [], ["x"],
                        buffers=[("b_w%d" % k, "w%d" % k, [1024, 1024]) for k in range(20)])
    bad("stand_ins_past_file_budget.json", many,
        "loading this file would need", "64 MiB + 16 x its size", "--limit file-mb=N")
    def weight_meta(fqn, **fields):
        def edit(c):
            c["config"][fqn]["tensor_meta"].update(fields)
        return with_json(rec, "data/weights/model_weights_config.json", edit)
    bad("weight_stride_2_61.pt2", zip_bytes(weight_meta(
        "conv.weight", strides=[{"as_int": 2 ** 61}] * 4)),
        "weight size mismatch", "more bytes than fit in 64 bits", "tensor conv.weight")
    bad("weight_zero_stride_1e12.pt2", zip_bytes(weight_meta(
        "conv.bias", sizes=[{"as_int": 10 ** 12}], strides=[{"as_int": 0}])),
        "tensor conv.bias", "pt2lab accepts for one tensor")
    # 100 MiB of zeros deflate to ~100 KiB; the record's claimed size is charged first.
    bomb = dict(rec)
    bomb["data/weights/weight_0"] = bytes(100 << 20)
    bad("deflate_bomb.pt2", zip_bytes(bomb, compression=zipfile.ZIP_DEFLATED),
        "record data/weights/weight_0", "loading this file would need", "more than its")
    # Two central records for one local record: the same bytes counted twice.
    plain = zip_bytes(rec)
    recs = zip_records(plain)
    eocd = plain.rfind(b"PK\x05\x06")
    cd_off = struct.unpack_from("<I", plain, eocd + 16)[0]
    w0 = next(r for r in recs if r[0].endswith("data/weights/weight_0"))
    w1 = next(r for r in recs if r[0].endswith("data/weights/weight_1"))
    overlap = bytearray(plain)
    struct.pack_into("<I", overlap, w1[2] + 42, w0[1])
    bad("overlapping_records.pt2", bytes(overlap), "overlaps record", "conv_relu/data/weights/weight_")
    def conv_arg(index, value):
        def edit(m):
            node(m, "conv2d.default")["inputs"][index]["arg"] = value
        return zip_bytes(with_model(rec, edit))
    bad("conv_padding_1e5.pt2", conv_arg(4, {"as_ints": [100000, 100000]}),
        "while executing %conv2d", "[2, 8, 200014, 200014]", "pt2lab accepts for one tensor",
        stage="run")
    rprefix, rrec = read_asset("resnet_style")
    def resnet(edit):
        return zip_bytes(with_model(rrec, edit), prefix=rprefix)
    def pool_output(m):
        node(m, "adaptive_avg_pool2d.default")["inputs"][1]["arg"] = {"as_ints": [100000, 100000]}
    bad("adaptive_pool_output_1e5.pt2", resnet(pool_output),
        "while executing %adaptive_avg_pool2d", "pt2lab accepts for one tensor", stage="run")
    no_extras = {k: v for k, v in rec.items()
                 if not k.startswith("extra/") and not k.startswith("data/sample_inputs/")}
    def hint(m):
        tv = m["graph_module"]["graph"]["tensor_values"]["x"]
        tv["sizes"][0] = {"as_expr": {"expr_str": "s0", "hint": {"as_int": 2 ** 40}}}
        m["graph_module"]["graph"]["sym_int_values"] = {}
    bad("symbolic_hint_2_40.pt2", zip_bytes(with_model(no_extras, hint)),
        "input x", "pt2lab accepts for one tensor", stage="inputs")
    # A 3 KB graph whose conv asks for 3.8e9 multiply-adds: the work budget refuses it.
    bad("conv_work_past_budget.json", mini_program(bare, [("x", [1, 16, 256, 256], F32),
                                                          ("w", [16, 16, 15, 15], F32)], [
        ("torch.ops.aten.conv2d.default",
         [("input", tensor_arg("x")), ("weight", tensor_arg("w")), ("bias", {"as_none": True}),
          ("stride", {"as_ints": [1, 1]}), ("padding", {"as_ints": [7, 7]})],
         "conv", [1, 16, 256, 256], F32)], ["conv"]),
        "while executing %conv", "multiply-adds in all", "--limit run-gmacs=N", stage="run")

    # --- arithmetic overflow: checked, never wrapped -----------------------------------
    def with_npy(data, name="extra/pt2lab/output_0.npy.b64"):
        # The manifest's reference output: an .npy file as base64 text (FORMATS.md section 3).
        return zip_bytes({**rec, name: base64.b64encode(data)})
    bad("npy_numel_2_32_squared.pt2",
        with_npy(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }")),
        "output_0.npy.b64", "more elements than fit in 64 bits")
    bad("npy_numel_2_62_times_4.pt2",
        with_npy(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }")),
        "output_0.npy.b64", "more elements than fit in 64 bits")
    bad("weight_numel_2_32_squared.pt2", zip_bytes(weight_meta(
        "conv.bias", sizes=[{"as_int": 2 ** 32}, {"as_int": 2 ** 32}], strides=[{"as_int": 1}] * 2)),
        "tensor conv.bias", "more elements than fit in 64 bits")
    bad("weight_numel_2_62_times_4.pt2", zip_bytes(weight_meta(
        "conv.bias", sizes=[{"as_int": 2 ** 62}, {"as_int": 4}], strides=[{"as_int": 4}, {"as_int": 1}])),
        "tensor conv.bias", "more elements than fit in 64 bits")
    def meta_overflow(m):
        m["graph_module"]["graph"]["tensor_values"]["relu"]["sizes"] = [{"as_int": 2 ** 32}] * 2
    bad("graph_meta_numel_overflow.pt2", zip_bytes(with_model(rec, meta_overflow)),
        "hold more elements than fit in 64 bits", "tensor_values.relu.sizes")
    def dilation(m):
        node(m, "conv2d.default")["inputs"].append(
            {"name": "dilation", "arg": {"as_ints": [2 ** 62, 1]}, "kind": 1})
    bad("conv_dilation_overflow.pt2", zip_bytes(with_model(rec, dilation)),
        "while executing %conv2d", "overflows 64-bit arithmetic", stage="run")
    bad("schema_major_2_32_plus_8.pt2",
        zip_bytes(with_model(rec, lambda m: m.__setitem__("schema_version", {"major": 2 ** 32 + 8, "minor": 0}))),
        "unknown schema major version 4294967304")
    big = copy.deepcopy(model)
    node(big, "conv2d.default")["inputs"][3]["arg"] = {"as_ints": ["BIG", 1]}
    bad("integer_past_int64.pt2", zip_bytes({**rec, "models/model.json": replace_once(
        json.dumps(big).encode(), b'"BIG"', b"18446744073709551615")}),
        "integer 18446744073709551615 is out of range", "$.graph_module.graph.nodes[0].inputs[3].arg.as_ints[0]")

    # --- the executor on degenerate shapes: torch's rules, the node named ---------------
    B = bare
    bad("adaptive_pool_zero_height.json", mini_program(B, [("x", [2, 3, 0, 16], F32)], [
        ("torch.ops.aten.adaptive_avg_pool2d.default",
         [("self", tensor_arg("x")), ("output_size", {"as_ints": [2, 2]})], "pool", [2, 3, 2, 2], F32)],
        ["pool"]),
        "while executing %pool", "non-zero size for non-batch dimensions", "dimension 2 being empty",
        stage="run")
    bad("batch_norm_train_zero_batch.json", mini_program(B, [("x", [0, 3, 4, 4], F32)], [
        ("torch.ops.aten._native_batch_norm_legit_functional.default",
         [("input", tensor_arg("x")), ("weight", {"as_none": True}), ("bias", {"as_none": True}),
          ("running_mean", tensor_arg("b_rm")), ("running_var", tensor_arg("b_rv")),
          ("training", {"as_bool": True}), ("momentum", {"as_float": 0.1}), ("eps", {"as_float": 1e-5})],
         "bn", [0, 3, 4, 4], F32)], ["bn"], buffers=[("b_rm", "bn.running_mean", [3]),
                                                    ("b_rv", "bn.running_var", [3])]),
        "while executing %bn", "at least one value per channel", stage="run")
    bad("sym_size_of_0d.json", mini_program(B, [("x", [], F32)], [
        ("torch.ops.aten.sym_size.int", [("self", tensor_arg("x")), ("dim", {"as_int": 0})],
         "size", [], I64)], ["size"]),
        "while executing %size", "Dimension specified as 0 but tensor has no dimensions", stage="run")
    bad("view_size_product_wraps.json", mini_program(B, [("x", [4], F32)], [
        ("torch.ops.aten.view.default", [("self", tensor_arg("x")), ("size", {"as_ints": [2 ** 62, 4]})],
         "view", [4], F32)], ["view"]),
        "while executing %view", "does not fit in 64 bits", stage="run")
    bad("weight_negative_storage_offset.pt2", zip_bytes(weight_meta(
        "conv.weight", storage_offset={"as_int": -100})),
        "tensor conv.weight", "negative storage offset -100")
    bad("max_pool_kernel_1e12.json", mini_program(B, [("x", [1, 1, 4, 4], F32)], [
        ("torch.ops.aten.max_pool2d.default",
         [("self", tensor_arg("x")), ("kernel_size", {"as_ints": [10 ** 12, 1]}),
          ("stride", {"as_ints": [1, 1]}), ("padding", {"as_ints": [5 * 10 ** 11, 0]})],
         "pool", [1, 1, 5, 4], F32)], ["pool"]),
        "while executing %pool", "kernel_size 1000000000000 is out of range", stage="run")
    bad("max_pool_padding_past_half.json", mini_program(B, [("x", [1, 1, 4, 4], F32)], [
        ("torch.ops.aten.max_pool2d.default",
         [("self", tensor_arg("x")), ("kernel_size", {"as_ints": [3, 3]}),
          ("stride", {"as_ints": [1, 1]}), ("padding", {"as_ints": [2, 2]})],
         "pool", [1, 1, 6, 6], F32)], ["pool"]),
        "while executing %pool", "pad should be at most half of kernel size", stage="run")
    bad("max_pool_empty_plane.json", mini_program(B, [("x", [1, 1, 0, 4], F32)], [
        ("torch.ops.aten.max_pool2d.default",
         [("self", tensor_arg("x")), ("kernel_size", {"as_ints": [2, 2]})], "pool", [1, 1, 0, 2], F32)],
        ["pool"]),
        "while executing %pool", "with optional 0 dim batch size", stage="run")
    bad("conv_kernel_larger_than_input.json", mini_program(B, [("x", [1, 3, 2, 2], F32),
                                                              ("w", [4, 3, 3, 3], F32)], [
        ("torch.ops.aten.conv2d.default", [("input", tensor_arg("x")), ("weight", tensor_arg("w"))],
         "conv", [1, 4, 1, 1], F32)], ["conv"]),
        "while executing %conv", "Kernel size can't be greater than actual input size", stage="run")
    bad("quantize_per_channel_of_0d.json", mini_program(B, [("x", [], F32), ("s", [1], F32),
                                                           ("z", [1], I64)], [
        ("torch.ops.quantized_decomposed.quantize_per_channel.default",
         [("input", tensor_arg("x")), ("scales", tensor_arg("s")), ("zero_points", tensor_arg("z")),
          ("axis", {"as_int": 0}), ("quant_min", {"as_int": -128}), ("quant_max", {"as_int": 127}),
          ("dtype", {"as_scalar_type": I8})], "q", [], I8)], ["q"]),
        "while executing %q", "0-dim tensor has no channel axis", stage="run")
    bad("half_precision_input.json", mini_program(B, [("x", [2, 2], F16)], [
        ("torch.ops.aten.relu.default", [("self", tensor_arg("x"))], "relu", [2, 2], F16)], ["relu"]),
        "input x", "this input is f16[2, 2]", stage="inputs")
    bad("buffer_mutation_changes_shape.json", mini_program(B, [("x", [4], F32)], [
        ("torch.ops.aten.clone.default", [("self", tensor_arg("x"))], "clone", [4], F32)], [],
        buffers=[("b_stat", "stat", [3])], mutations=[("clone", "stat")]),
        "the new value of stat is f32[4], but the buffer is f32[3]", stage="run")

    # --- quadratic work: linear now (the budget test times them) -----------------------
    wide = copy.deepcopy(model)
    wide["graph_module"]["metadata"] = {"k%d" % k: "" for k in range(100000)}
    wide_text = json.dumps(wide).encode()
    bad("wide_object_then_duplicate_key.json", replace_once(wide_text, b'"k99999": ""',
                                                            b'"k99999": "", "k5": ""'),
        "duplicate key \"k5\"", "$.graph_module.metadata.k5")
    bad("duplicate_key.pt2", zip_bytes({**rec, "models/model.json": replace_once(
        model_text, b'"torch_version": ', b'"torch_version": "x", "torch_version": ')}),
        "duplicate key \"torch_version\"")
    many_records = {**rec, **{"extra/r/%05d" % k: b"" for k in range(20000)}}
    dup = zip_bytes(many_records)
    dup = dup.replace(b"extra/r/19999", b"extra/r/19998")
    bad("zip_20k_records_duplicate_name.pt2", dup, "extra/r/19998", "two records have this name")

    # --- malformed .npy headers --------------------------------------------------------
    f4 = bytes(2 * 3 * 16 * 16 * 4)
    bad("npy_empty_descr.pt2", with_npy(npy_bytes("{'descr': '', 'fortran_order': False, 'shape': (2, 3, 16, 16), }", f4)),
        "output_0.npy.b64", "unsupported dtype ''")
    bad("npy_empty_shape_value.pt2", with_npy(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': , }", f4)),
        "output_0.npy.b64", "malformed header", "'shape' is not a tuple")
    bad("npy_unquoted_descr.pt2", with_npy(npy_bytes("{'descr': <f4, 'fortran_order': False, 'shape': (2,), }")),
        "malformed header", "'descr' is not a quoted string")
    bad("npy_shape_not_numbers.pt2", with_npy(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }")),
        "malformed header", "other than non-negative integers")
    bad("npy_negative_dimension.pt2", with_npy(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }")),
        "malformed header", "other than non-negative integers")
    bad("npy_unterminated_dict.pt2", with_npy(npy_bytes("{'descr': '<f4', 'fortran_order': False")),
        "malformed header")
    bad("npy_header_past_end.pt2", with_npy(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
                                                      header_len=60000)),
        "output_0.npy.b64", "truncated header")
    bad("npy_v2_header_length_4g.pt2", with_npy(npy_bytes("{}", version=2, header_len=0xffffffff)),
        "output_0.npy.b64", "truncated header")
    bad("npy_fortran_order.pt2", with_npy(npy_bytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3, 16, 16), }", f4)),
        "Fortran-order arrays are not supported")
    bad("npy_data_too_short.pt2", with_npy(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 16, 16), }", f4[:100])),
        "holds 100 bytes", "needs 6144")

    # --- names are data, not code --------------------------------------------------------
    def rename_relu(new_name):
        def edit(m):
            node(m, "relu.default")["outputs"][0]["as_tensor"]["name"] = new_name
            m["graph_module"]["graph"]["outputs"][0]["as_tensor"]["name"] = new_name
            m["graph_module"]["signature"]["output_specs"][0]["user_output"]["arg"]["as_tensor"]["name"] = new_name
            tv = m["graph_module"]["graph"]["tensor_values"]
            tv[new_name] = tv.pop("relu")
        return zip_bytes(with_model(rec, edit))
    bad("node_name_with_newline.pt2", rename_relu("relu\nimport os"),
        "node name 'relu\\nimport os' is not a Python identifier", "would have named it 'relu_import_os'")
    bad("node_name_keyword.pt2", rename_relu("class"), "node name 'class' is a Python keyword")
    def target_inject(m):
        node(m, "relu.default")["target"] = "torch.ops.aten.relu.default\nos.system"
    bad("target_with_newline.pt2", zip_bytes(with_model(rec, target_inject)),
        "is not a qualified Python name", "nodes[1].target")
    def param_inject(m):
        m["graph_module"]["signature"]["input_specs"][0]["parameter"]["parameter_name"] = "conv.weight\nimport os"
    bad("parameter_name_with_newline.pt2", zip_bytes(with_model(rec, param_inject)),
        "attribute path 'conv.weight\\nimport os'", "input_specs[0]")
    def kwarg_inject(m):
        n = node(m, "relu.default")
        n["target"] = "torch.ops.mylib.fancy_relu.default"
        n["inputs"].append({"name": "slope=1)\nimport os  #", "arg": {"as_float": 0.25}, "kind": 2})
    bad("kwarg_name_injection.pt2", zip_bytes(with_model(rec, kwarg_inject)),
        "keyword argument name", "is not a Python identifier")
    fx_name = copy.deepcopy(fx)
    fx_name["nodes"][1]["name"] = "conv\nimport os"
    fx_name["nodes"][2]["args"] = [{"node": "conv\nimport os"}]
    bad("fx_node_name_with_newline.json", json.dumps(fx_name).encode(),
        "is not a Python identifier", "$.nodes[1].name")
    fx_target = copy.deepcopy(fx)
    fx_target["nodes"][1]["target"] = "conv\nimport os"
    bad("fx_module_target_with_newline.json", json.dumps(fx_target).encode(),
        "attribute path", "$.nodes[1].target")
    fx_repr = copy.deepcopy(fx)
    fx_repr["nodes"][2]["args"] = [{"node": "conv"}, {"repr": "1)\nimport os\n("}]
    bad("fx_repr_with_newline.json", json.dumps(fx_repr).encode(),
        "holds a line break", "$.nodes[2].args[1].repr")
    fx_dev = copy.deepcopy(fx)
    fx_dev["nodes"][2]["kwargs"] = {"device": {"device": "cpu', index=0)\nimport os\n#"}}
    bad("fx_device_injection.json", json.dumps(fx_dev).encode(),
        "is not a device name", "$.nodes[2].kwargs.device.device")

    # --- messages that used to mislead -----------------------------------------------------
    bad("weight_negative_stride.pt2", zip_bytes(weight_meta(
        "conv.weight", strides=[{"as_int": -27}, {"as_int": 9}, {"as_int": 3}, {"as_int": 1}])),
        "negative stride -27 in dimension 0", "never have negative strides")
    def graph_negative_stride(m):
        m["graph_module"]["graph"]["tensor_values"]["relu"]["strides"][1] = {"as_int": -256}
    bad("graph_meta_negative_stride.pt2", zip_bytes(with_model(rec, graph_negative_stride)),
        "negative stride -256", "tensor_values.relu.strides[1]")

    # --- zip structure ---------------------------------------------------------------------
    bad("zip_count_past_directory.pt2", patch_eocd(patch_eocd(zip_bytes(rec), 8, "<H", 65535), 10, "<H", 65535),
        "claims 65535 records")
    bad("zip_local_header_missing.pt2",
        patch_central(zip_bytes(rec), "conv_relu/models/model.json", 42, "<I", 3),
        "conv_relu/models/model.json", "local header is missing or damaged")
    bad("zip_record_runs_into_directory.pt2",
        patch_central(zip_bytes(rec), "conv_relu/models/model.json", 20, "<I", 10 ** 6),
        "conv_relu/models/model.json", "runs past the end of the file")

    # --- other layouts that must load -----------------------------------------------
    good("deflated.pt2", zip_bytes(rec, compression=zipfile.ZIP_DEFLATED))
    good("python_zipfile_no_root_folder.pt2", zip_bytes(rec, prefix=""))
    good("renamed_root_folder.pt2", zip_bytes(rec, prefix="some_other_name/"))
    good("bare_model.json", rec["models/model.json"], "carries no weights")
    legacy = {"serialized_exported_program.json": rec["models/model.json"],
              "serialized_state_dict.pt": b"(pickled state dict)", "version": b"7.3"}
    good("legacy_2_7_layout.pt2", zip_bytes(legacy, prefix=""), "legacy archive", "stand-in values")

    def unknown_op(m):
        n = node(m, "relu.default")
        n["target"] = "torch.ops.mylib.fancy_relu.default"
        n["inputs"].append({"name": "slope", "arg": {"as_float": 0.25}, "kind": 2})
    good("unknown_op.pt2", zip_bytes(with_model(rec, unknown_op)), "mylib.fancy_relu.default", "cannot run")

    # A hostile data/sample_inputs/model.pt: a pickle that would call os.system on load.
    class Hostile:
        def __reduce__(self):
            return (os.system, ("echo pwned",))
    hostile = dict(rec)
    hostile["data/sample_inputs/model.pt"] = zip_bytes(
        {"data.pkl": pickle.dumps(((Hostile(),), {}), protocol=2), "byteorder": b"little"},
        prefix="archive/")
    good("hostile_sample_inputs.pt2", zip_bytes(hostile), "global 'posix system' is not allowed",
         "data/sample_inputs/model.pt", "without its sample inputs")

    def older_schema(m):
        m["schema_version"] = {"major": 7, "minor": 3}
    good("schema_7.pt2", zip_bytes(with_model(rec, older_schema)), "older than 8.x")
    return files, expect


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed corpus instead of writing")
    args = ap.parse_args()
    files, expect = build()
    files["expected.json"] = (json.dumps(expect, indent=2, sort_keys=True) + "\n").encode()
    out_dir = os.path.join(ROOT, "tests", "corpus")
    # Files in bad/ and good/ that the script no longer writes.
    leftover = sorted(os.path.join(sub, f) for sub in ("bad", "good")
                      if os.path.isdir(os.path.join(out_dir, sub))
                      for f in os.listdir(os.path.join(out_dir, sub))
                      if os.path.join(sub, f) not in files)
    if args.check:
        stale = []
        for rel, data in sorted(files.items()):
            path = os.path.join(out_dir, rel)
            if not os.path.exists(path) or open(path, "rb").read() != data:
                stale.append(rel)
        for rel in stale:
            print(f"DIFF     tests/corpus/{rel}: not what tools/make_corpus.py writes")
        for rel in leftover:
            print(f"STALE    tests/corpus/{rel}: tools/make_corpus.py does not write it")
        print(f"corpus: {len(files) - len(stale)} of {len(files)} files current")
        return 1 if stale or leftover else 0
    for rel in leftover:
        os.remove(os.path.join(out_dir, rel))
    for rel, data in sorted(files.items()):
        path = os.path.join(out_dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    print(f"wrote {len(files)} files to tests/corpus ({len(expect['bad'])} bad, {len(expect['good'])} good)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
