#!/usr/bin/env bash
# Drives memtrail-gui in a real X window (Xvfb) with xdotool, as a user
# would: tab switches (Ctrl+Tab), zoom (mouse wheel on the timeline), a range
# (right-drag on the timeline), a search (typed into the flame graph's
# field), the Scopes and What-if tabs, and takes a screenshot of the screen
# (ImageMagick's import) after each step.
#   xdotool_drive.sh GUI_BIN TRACE OUT_DIR
# Exit 0: every step changed the screen, the tabs painted, and the zoom, the
# range and the search did what they say (MEMTRAIL_GUI_TIMING's marks
# timeline-zoomed-in, range-applied, flame-search-highlighted); 77: a tool is
# missing (the reason on stdout); else 1 with the step that failed.
# Screenshots: OUT_DIR/NN-step.png; the GUI's stderr: OUT_DIR/gui.log.
set -u
gui=$1 trace=$2 out=$3
for tool in xvfb-run xdotool import compare; do
  if ! command -v "$tool" >/dev/null; then
    case $tool in
      xvfb-run) pkg=xvfb ;; xdotool) pkg=xdotool ;; *) pkg=imagemagick ;;
    esac
    echo "skip: $tool not installed (Debian: $pkg)"
    exit 77
  fi
done
mkdir -p "$out"

# Inside the X server: everything below runs with DISPLAY set.
if [ "${XDOTOOL_DRIVE_INNER:-}" != 1 ]; then
  XDOTOOL_DRIVE_INNER=1 exec timeout 240 xvfb-run -a -s '-screen 0 1400x900x24' "$0" "$@"
fi

W=1400 H=860
log=$out/gui.log
fail() {
  echo "FAIL: $*"
  echo "--- gui.log"
  cat "$log"
  kill "$pid" 2>/dev/null
  exit 1
}
# Waits up to $2 s for the log to have $1.
wait_log() {
  for _ in $(seq 1 $(($2 * 10))); do
    grep -q -- "$1" "$log" && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
n=0
last=
# shot NAME: a screenshot of the screen; fails the step when it equals the last.
shot() {
  sleep "${2:-0.6}"
  n=$((n + 1))
  local file
  file=$(printf '%s/%02d-%s.png' "$out" "$n" "$1")
  import -window root "$file" || fail "import $1"
  if [ -n "$last" ]; then
    local diff
    diff=$(compare -metric AE "$last" "$file" null: 2>&1)
    [ "${diff%% *}" != 0 ] || fail "step '$1' changed nothing on screen"
    echo "step $1: $diff pixels changed ($file)"
  fi
  last=$file
}

QT_QPA_PLATFORM=xcb MEMTRAIL_GUI_TIMING=1 "$gui" "$trace" --size ${W}x$H --view summary \
  2>"$log" &
pid=$!
wait_log "timing all-ready" 60 || fail "the window never got ready"
wid=$(xdotool search --sync --onlyvisible --name '^memtrail' | head -1)
[ -n "$wid" ] || fail "no window named memtrail"
# No window manager: the window sits at its own place; focus it by hand.
xdotool windowmove --sync "$wid" 0 0
xdotool windowfocus --sync "$wid"
eval "$(xdotool getwindowgeometry --shell "$wid")"
echo "window $wid at $X,$Y ${WIDTH}x$HEIGHT"
shot summary 1

# Tabs: a click in the tab's body gives it the focus, then Ctrl+Tab.
xdotool mousemove --sync $((W / 2)) $((H - 60)) click 1
for view in timeline leaks tree; do
  xdotool key --clearmodifiers ctrl+Tab
  wait_log "timing $view-painted" 10 || fail "Ctrl+Tab did not show $view"
  shot "$view"
done

# Back to the timeline: zoom in with the wheel at its middle.
xdotool key --clearmodifiers ctrl+shift+Tab ctrl+shift+Tab
shot timeline-again
xdotool mousemove --sync $((W / 2)) $((H / 2)) click --repeat 5 --delay 80 4
wait_log "timing timeline-zoomed-in" 10 || fail "the wheel did not zoom the timeline in"
shot zoom
# A range: right-drag over the middle third of the chart.
xdotool mousemove --sync $((W / 3)) $((H / 2)) mousedown 3 \
  mousemove --sync $((W / 2)) $((H / 2)) mousemove --sync $((2 * W / 3)) $((H / 2)) mouseup 3
wait_log "timing range-applied" 30 || fail "the right-drag applied no range"
shot range 2

# Search: the flame graph's field is the last control of its first row.
xdotool key --clearmodifiers ctrl+Tab ctrl+Tab ctrl+Tab
wait_log "timing flame-painted" 10 || fail "Ctrl+Tab did not show flame"
shot flame
xdotool mousemove --sync $((W - 150)) 64 click 1
xdotool type --delay 40 "${SEARCH_TEXT:-main}"
wait_log "timing flame-search-highlighted" 10 || fail "the search lit no frame"
shot search

# On to Caller/Callee, the site charts (their pass runs once shown) and the
# histograms.
for view in callee sites histogram; do
  xdotool key --clearmodifiers ctrl+Tab
  wait_log "timing $view-painted" 20 || fail "Ctrl+Tab did not show $view"
  shot "$view" 1.5
done

# Backwards (Ctrl+Shift+Tab, wrapping past Summary) to What-if, whose replay
# runs in the background once shown, and Scopes. (Forwards, Ctrl+Tab did
# not leave the Fragmentation tab in a trial run: a widget there takes it.)
for view in sites callee flame tree leaks timeline summary processes compare whatif scopes; do
  xdotool key --clearmodifiers ctrl+shift+Tab
  case $view in whatif | scopes) ;; *) continue ;; esac
  wait_log "timing $view-painted" 10 || fail "Ctrl+Shift+Tab did not show $view"
  shot "$view" 1.5
done

xdotool key --clearmodifiers ctrl+q
for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null && fail "Ctrl+Q did not quit"
wait "$pid"
echo "ok: $n screenshots in $out"
