# shellcheck shell=sh disable=SC2154,SC2034 # me, bin: the caller's; work, traces, mtr: for it
# What bench/gui_vs_heaptrack.sh and bench/gui_tabs_vs_heaptrack.sh share,
# sourced by both (`. "$here/gui_bench.sh"`, with `me` set to the caller's
# name for its messages): the checks, the work directory, memtrail's trace of
# a program and the one Xvfb the timing runs in.

# need_tools HINT TOOL...: exits 2 naming the first TOOL not on PATH.
need_tools() {
  hint=$1
  shift
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "$me: $tool not found ($hint)" >&2; exit 2; }
  done
}

# need_bins BIN...: exits 2 naming the first BIN not built in $bin.
need_bins() {
  for b in "$@"; do
    [ -x "$bin/$b" ] || { echo "$me: no $bin/$b (build it first)" >&2; exit 2; }
  done
}

# make_work PREFIX: $work, a directory under ~/.cache/memtrail-bench removed
# at exit, and $traces, where traces go (MEMTRAIL_BENCH_TRACES=DIR keeps
# them in DIR for the next invocation).
make_work() {
  mkdir -p "$HOME/.cache/memtrail-bench"
  work=$(mktemp -d "$HOME/.cache/memtrail-bench/$1.XXXXXX")
  trap 'rm -rf "$work"' EXIT INT TERM
  traces=${MEMTRAIL_BENCH_TRACES:-$work/traces}
  mkdir -p "$traces" "$work/fb" "$work/config" "$work/runtime"
  chmod 700 "$work/runtime"
}

# memtrail_record NAME PROGRAM ARGS...: $traces/NAME.run by `memtrail run`,
# unless already there; $mtr is its trace.
memtrail_record() {
  name=$1
  shift
  if [ ! -d "$traces/$name.run" ]; then
    "$bin/memtrail" run -q -o "$traces/$name.run" -- "$@" >"$work/record.log" 2>&1 ||
      { cat "$work/record.log" >&2; exit 1; }
  fi
  mtr=$(ls "$traces/$name.run/"*.mtr)
}

# in_xvfb SCRIPT ARGS...: python3 SCRIPT FBFILE WORK ARGS... in one Xvfb
# (1600x1000) whose framebuffer is the file FBFILE. Both GUIs keep settings
# (recent files, window sizes): they get a settings dir new to this
# invocation, and Qt the runtime dir it asks for.
in_xvfb() {
  script=$1
  shift
  XDG_CONFIG_HOME=$work/config XDG_RUNTIME_DIR=$work/runtime \
    xvfb-run -a -s "-screen 0 1600x1000x24 -fbdir $work/fb" \
    python3 "$script" "$work/fb/Xvfb_screen0" "$work" "$@"
}
