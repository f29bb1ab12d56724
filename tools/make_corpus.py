"""Writes the loader's test corpus: tests/corpus/bad/* (each must fail with a
clear message) and tests/corpus/good/* (other layouts that must load).

Every file is derived from assets/graphs/conv_relu.pt2 by one deliberate
change. tests/corpus/expected.json is the specification the tests check: for
each bad file, the phrases its error message must contain (the file name is
always required too); for each good file, the warnings it must carry.

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
import tempfile
import zipfile

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


def build():
    """Returns {relative path: bytes} and the expectations."""
    prefix, rec = read_base()
    base = open(BASE, "rb").read()
    files, expect = {}, {"bad": {}, "good": {}}

    def bad(name, data, *phrases):
        files["bad/" + name] = data
        expect["bad"][name] = list(phrases)

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
    if args.check:
        stale = []
        for rel, data in sorted(files.items()):
            path = os.path.join(out_dir, rel)
            if not os.path.exists(path) or open(path, "rb").read() != data:
                stale.append(rel)
        for rel in stale:
            print(f"DIFF     tests/corpus/{rel}: not what tools/make_corpus.py writes")
        print(f"corpus: {len(files) - len(stale)} of {len(files)} files current")
        return 1 if stale else 0
    for rel, data in sorted(files.items()):
        path = os.path.join(out_dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    print(f"wrote {len(files)} files to tests/corpus ({len(expect['bad'])} bad, {len(expect['good'])} good)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
