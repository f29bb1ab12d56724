#!/usr/bin/env bash
# Real PyTorch for pt2lab's goldens: makes (once, cached outside the clone) a minimal Debian
# root with Debian's python3-torch and runs a command in it, the clone bind-mounted at /pt2lab.
#   sid    python3-torch 2.14.1 (+ numpy, torchvision, tabulate): assets and every golden;
#          + onnx, onnxruntime: the ONNX peers of tools/onnx_models.py (benchmarks only)
#   trixie python3-torch 2.6.0  (+ numpy, torchvision 0.21, tabulate): torch.ao's prepare_pt2e /
#          convert_pt2e goldens (torchvision: the zoo's CNNs rebuilt there, tools/pt2e_zoo_goldens.py)
#
#   scripts/torch_env.sh can                 exit 0 if roots can be made here, else say why, exit 3
#   scripts/torch_env.sh ensure [sid|trixie|all]   make or update the root(s); prints the time taken
#   scripts/torch_env.sh run sid|trixie CMD...     run CMD in the root (cwd /pt2lab = this clone)
#
# Roots live in ${PT2LAB_CACHE:-/var/cache/pt2lab}/<suite> and are reused; a root whose package
# list changed is updated, a half-made one is made again. The archive URI comes from this
# machine's own apt configuration (or $PT2LAB_DEBIAN_URI); no host name is written in the repo.
# Needs root (debootstrap, chroot, mount namespaces) and debootstrap.
set -euo pipefail

CACHE=${PT2LAB_CACHE:-/var/cache/pt2lab}
CLONE=$(cd "$(dirname "$0")/.." && pwd)
MNT=/pt2lab
APT_OPTS=(-o Acquire::Check-Valid-Until=false -o APT::Install-Recommends=false
    -o Dpkg::Use-Pty=0 -q)

say() { printf '[torch_env] %s\n' "$*" >&2; }

packages_of() { # suite -> Debian packages installed in its root
    case "$1" in
    sid) echo "python3-torch python3-numpy python3-torchvision python3-tabulate python3-onnx python3-onnxruntime" ;;
    trixie) echo "python3-torch python3-numpy python3-torchvision python3-tabulate" ;;
    *) return 1 ;;
    esac
}
torch_of() { # suite -> the torch.__version__ prefix the goldens were made with
    case "$1" in
    sid) echo "2.14.1" ;;
    trixie) echo "2.6.0" ;;
    esac
}

# Why this machine cannot make the roots (empty when it can).
cannot() {
    if [ "$(id -u)" -ne 0 ]; then
        echo "not root (debootstrap, chroot and bind mounts need root)"
    elif ! command -v debootstrap >/dev/null 2>&1; then
        echo "debootstrap is not installed (scripts/deps.sh installs it)"
    elif ! command -v unshare >/dev/null 2>&1; then
        echo "unshare (util-linux) is not installed"
    fi
}

# The Debian archive URI this machine already uses.
debian_uri() {
    if [ -n "${PT2LAB_DEBIAN_URI:-}" ]; then
        echo "$PT2LAB_DEBIAN_URI"
        return
    fi
    local f uri=""
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        # First URIs: of a deb stanza whose Suites are not security or updates.
        uri=$(awk 'BEGIN { RS = ""; FS = "\n" }
            { u = ""; s = ""; t = ""
              for (i = 1; i <= NF; i++) {
                if ($i ~ /^URIs:/) { u = $i; sub(/^URIs:[ \t]*/, "", u); sub(/[ \t].*/, "", u) }
                if ($i ~ /^Suites:/) s = $i
                if ($i ~ /^Types:/) t = $i }
              if (u != "" && t ~ /deb( |$)/ && s !~ /security/) { print u; exit } }' "$f")
        [ -n "$uri" ] && break
    done
    if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
        uri=$(awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++)
            if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' /etc/apt/sources.list)
    fi
    [ -n "$uri" ] || { say "no Debian archive URI in /etc/apt (set PT2LAB_DEBIAN_URI)"; return 1; }
    echo "$uri"
}

# Runs "$@" inside ROOT with /proc, /dev and the clone mounted, in a private mount namespace
# (the mounts vanish with the command, even when it is killed).
# Every command in a root runs with the CPU kernels pinned, so the data it writes
# is the same on any x86-64 machine: ATen's own vector kernels at their default
# (scalar-compatible) level, and oneDNN's (conv, linear) at AVX2 at most: on an
# AVX-512 machine its AVX-512 convs round differently, and the PT2E goldens'
# observer inputs changed in their last bits (60 files, 2026-12-02).
in_root() { # root, command...
    local root=$1
    shift
    mkdir -p "$root$MNT"
    unshare --mount --propagation private /bin/bash -c '
        set -e
        root=$1 clone=$2 mnt=$3; shift 3
        mount -t proc proc "$root/proc"
        mount --rbind /dev "$root/dev"
        mount --bind "$clone" "$root$mnt"
        cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
        exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
            LANG=C.UTF-8 ATEN_CPU_CAPABILITY=default ONEDNN_MAX_CPU_ISA=AVX2 DNNL_MAX_CPU_ISA=AVX2 \
            OMP_NUM_THREADS=1 \
            PYTHONDONTWRITEBYTECODE=1 PYTHONHASHSEED=0 DEBIAN_FRONTEND=noninteractive \
            /bin/sh -c "cd \"\$0\" && exec \"\$@\"" "$mnt" "$@"
    ' in_root "$root" "$CLONE" "$MNT" "$@"
}

ensure_one() { # suite
    local suite=$1 root="$CACHE/$1" pkgs want_torch
    pkgs=$(packages_of "$suite") || { say "unknown suite $suite (sid|trixie)"; return 2; }
    want_torch=$(torch_of "$suite")
    mkdir -p "$CACHE"
    exec 9>"$CACHE/$suite.lock"
    flock 9 # one maker at a time; others wait and then find the root ready
    local marker="$root/.pt2lab-ready" t0 t1 t2
    if [ -f "$marker" ] && [ "$(head -n1 "$marker")" = "$pkgs" ]; then
        say "$suite root ready at $root ($(sed -n 2p "$marker"))"
        exec 9>&-
        return 0
    fi
    t0=$(date +%s)
    if [ ! -f "$root/.pt2lab-bootstrapped" ]; then
        local uri
        uri=$(debian_uri)
        rm -rf "$root"
        say "debootstrap --variant=minbase $suite $root (archive from /etc/apt)"
        debootstrap --variant=minbase "$suite" "$root" "$uri" >"$CACHE/$suite.debootstrap.log" 2>&1 ||
            {
                tail -n 20 "$CACHE/$suite.debootstrap.log" >&2
                say "debootstrap failed (log: $CACHE/$suite.debootstrap.log)"
                return 1
            }
        # dpkg: no fsync per file and no documentation (the roots only run Python)
        mkdir -p "$root/etc/dpkg/dpkg.cfg.d"
        printf '%s\n' force-unsafe-io 'path-exclude=/usr/share/doc/*' \
            'path-exclude=/usr/share/man/*' 'path-exclude=/usr/share/locale/*' \
            'path-exclude=/usr/share/info/*' >"$root/etc/dpkg/dpkg.cfg.d/01-pt2lab"
        touch "$root/.pt2lab-bootstrapped"
    fi
    t1=$(date +%s)
    say "installing $pkgs into the $suite root"
    # shellcheck disable=SC2086
    in_root "$root" sh -c "apt-get ${APT_OPTS[*]} update >/dev/null &&
        apt-get ${APT_OPTS[*]} install -y $pkgs >/dev/null && apt-get clean" ||
        {
            say "installing into the $suite root failed"
            return 1
        }
    t2=$(date +%s)
    local version
    version=$(in_root "$root" python3 -c 'import torch; print(torch.__version__)' 2>/dev/null | tail -n1)
    case "$version" in
    "$want_torch"*) ;;
    *)
        say "the $suite root has torch '$version', the goldens need $want_torch"
        return 1
        ;;
    esac
    printf '%s\ntorch %s, made in %ss (debootstrap %ss, packages %ss), %s\n' "$pkgs" "$version" \
        $((t2 - t0)) $((t1 - t0)) $((t2 - t1)) "$(du -sh "$root" 2>/dev/null | cut -f1)" >"$marker"
    say "$suite root made: $(sed -n 2p "$marker")"
    exec 9>&-
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
can)
    why=$(cannot)
    if [ -n "$why" ]; then
        echo "$why"
        exit 3
    fi
    ;;
ensure)
    why=$(cannot)
    [ -z "$why" ] || { say "cannot make the roots: $why"; exit 3; }
    which=${1:-all}
    if [ "$which" != all ]; then
        ensure_one "$which"
        exit
    fi
    # Both roots at once: downloading and unpacking overlap; each logs with its own prefix.
    start=$(date +%s)
    pids=()
    for s in sid trixie; do
        (ensure_one "$s" 2>&1 | sed -u "s/^/[$s] /" >&2; exit "${PIPESTATUS[0]}") &
        pids+=($!)
    done
    status=0
    for p in "${pids[@]}"; do wait "$p" || status=1; done
    [ $status -eq 0 ] || { say "making the roots failed"; exit 1; }
    say "both roots ready in $(($(date +%s) - start))s"
    ;;
run)
    suite=${1:-}
    shift || true
    packages_of "$suite" >/dev/null || { say "usage: $0 run sid|trixie CMD..."; exit 2; }
    [ $# -gt 0 ] || { say "usage: $0 run sid|trixie CMD..."; exit 2; }
    why=$(cannot)
    [ -z "$why" ] || { say "cannot run in the $suite root: $why"; exit 3; }
    ensure_one "$suite"
    # torch's harmless start-up complaints about this container (see TOOLCHAIN.md) are dropped.
    in_root "$CACHE/$suite" "$@" 2> >(grep -v -e 'UCX  ERROR failed to get boot id' \
        -e 'UCX ERROR failed to get boot id' -e 'Error in cpuinfo: failed to parse' >&2)
    ;;
*)
    sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
