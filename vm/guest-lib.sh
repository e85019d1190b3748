# Helpers for vm/guest-test (sourced): checks, waiting, and the programs
# under test — authkeyd, a watcher, the UHID virtual key — and those that
# use the key beside it (fido2-token, ssh-keygen, pam_u2f). Expects $bin
# (authkeyd's binaries) and $work (a scratch directory).

socket=/run/authkeyd.sock
failures=0
passes=0
daemon=""
watcher=""
virtkey=""

pass() { echo "PASS: $*"; passes=$((passes + 1)); }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
step() { printf '\n== %s (%s s)\n' "$*" "$(cut -d' ' -f1 /proc/uptime)"; }

# Seconds since boot, in $now (without a fork: forks are slow under TCG).
read_clock() { read -r now _ </proc/uptime; now=${now%.*}; }
# wait_for SECONDS COMMAND...: runs COMMAND every 0.1 s until it succeeds;
# fails once SECONDS have passed.
wait_for() {
    read_clock
    deadline=$((now + $1)); shift
    until "$@"; do
        read_clock
        [ "$now" -ge "$deadline" ] && return 1
        sleep 0.1
    done
}

authctl() { timeout 60 "$bin/authctl" --socket "$socket" "$@"; }
hidraw_nodes() { ls /dev/hidraw* 2>/dev/null; }
hidraw_present() { [ -n "$(hidraw_nodes)" ]; }
usb_key_ids() { python3 -c 'import json, sys; print(" ".join(a["id"] for a in json.load(sys.stdin)["authenticators"] if a["transport"] == "usb"))'; }
usb_key_listed() { [ -n "$(authctl list --json | usb_key_ids)" ]; }

# start_daemon NAME: authkeyd on its USB path, logging to $work/NAME.log.
start_daemon() {
    daemon_log="$work/$1.log"
    "$bin/authkeyd" --socket "$socket" --usb yes --allow-users '*' --state-dir /tmp/state --log-level debug \
        >"$daemon_log" 2>&1 &
    daemon=$!
    if wait_for 60 authctl list >/dev/null 2>&1; then pass "authkeyd answers on $socket"; else fail "authkeyd did not start"; finish; fi
}
stop_daemon() {
    kill -TERM "$daemon" 2>/dev/null
    wait "$daemon"
    status=$?
    daemon=""
    if [ $status -eq 0 ]; then pass "authkeyd stopped cleanly on SIGTERM"; else fail "authkeyd exited $status on SIGTERM"; fi
}
fd_count() { ls "/proc/$daemon/fd" | wc -l; }
fds_at_most() { [ "$(fd_count)" -le "$1" ]; }
# What the daemon's descriptors point to, without inode numbers, for a diff.
descriptors() { ls -l "/proc/$daemon/fd" | grep -F ' -> ' | sed 's/.* \([0-9]* -> \)/\1/; s/\[[0-9]*\]$//' | sort -n; }

# start_watcher NAME: `authctl watch --json`, its notifications in $work/NAME.jsonl.
start_watcher() {
    watch_file="$work/$1.jsonl"
    seen_added=0
    seen_removed=0
    "$bin/authctl" --socket "$socket" watch --json >"$watch_file" 2>"$work/$1.err" &
    watcher=$!
    # It prints nothing until a key comes or goes: once it holds a socket,
    # give it a moment to connect and ask to watch.
    if wait_for 60 holds_socket "$watcher"; then sleep 2; fi
    if kill -0 "$watcher" 2>/dev/null; then pass "the watcher runs"; else fail "the watcher ended: $(cat "$work/$1.err")"; fi
}
holds_socket() { ls -l "/proc/$1/fd" 2>/dev/null | grep -q "socket:"; }
stop_watcher() {
    kill "$watcher" 2>/dev/null
    wait "$watcher" 2>/dev/null
    watcher=""
}

# The watcher's notifications of one kind (added or removed), one a line.
events() { grep -F "\"authenticators.$1\"" "$watch_file" 2>/dev/null; }
event_count() { events "$1" | wc -l; }
has_events() { [ "$(event_count "$1")" -ge "$2" ]; }
# A field of the authenticator in the last notification of a kind.
last_event_field() {
    events "$1" | tail -n 1 | python3 -c 'import json, sys; print(json.load(sys.stdin)["params"]["authenticator"][sys.argv[1]])' "$2"
}
# expect_event KIND: waits for one more notification of KIND than seen so
# far (counted in $seen_KIND).
expect_event() {
    eval "count=\$((\${seen_$1:-0} + 1))"
    if wait_for 60 has_events "$1" "$count"; then
        eval "seen_$1=$count"
        pass "the watcher got authenticators.$1 ($(last_event_field "$1" id))"
    else
        fail "no authenticators.$1 within 60 s"
        return 1
    fi
}

# plug [SETTING...]: the virtual key, with more settings (--fault busy
# --fault-count 3) after the usual ones.
plug() {
    "$bin/authkeyd-virtkey" --uhid --presence after:200ms "$@" >>"$work/virtkey.out" 2>&1 &
    virtkey=$!
}
# Whether authkeyd-virtkey still runs (not a zombie), without a fork.
virtkey_running() {
    state=""
    [ -n "$virtkey" ] && read -r _ _ state _ <"/proc/$virtkey/stat" 2>/dev/null
    [ -n "$state" ] && [ "$state" != Z ]
}
# expect_plugged: after plug, waits for the watcher's authenticators.added
# and sets $key and $path from it; fails when none comes within 60 s, or
# at once when authkeyd-virtkey ends first (it refused a setting, say).
added_or_gone() { has_events added "$1" || ! virtkey_running; }
expect_plugged() {
    count=$((seen_added + 1))
    wait_for 60 added_or_gone "$count"
    if has_events added "$count"; then
        seen_added=$(event_count added)
        key=$(last_event_field added id)
        path=$(last_event_field added path)
        pass "the watcher got authenticators.added ($key at $path)"
    elif virtkey_running; then
        fail "no authenticators.added within 60 s"
        return 1
    else
        wait "$virtkey"
        fail "authkeyd-virtkey exited $?: $(tail -n 1 "$work/virtkey.out")"
        virtkey=""
        return 1
    fi
}
# unplug [KILL]: SIGTERM stops authkeyd-virtkey, which destroys the device
# (UHID_DESTROY); SIGKILL leaves it to the kernel, which destroys it when
# the process's /dev/uhid closes. Fails when the process did not end as asked.
unplug() {
    signal=${1:-TERM}
    kill "-$signal" "$virtkey" 2>/dev/null
    wait "$virtkey"
    virtkey_status=$?
    virtkey=""
    case $signal in
        TERM) [ $virtkey_status -eq 0 ] ;;
        KILL) [ $virtkey_status -eq 137 ] ;;
    esac
}

# plug_and_unplug COUNT: the key comes and goes COUNT times (odd times by
# SIGKILL), each seen by the watcher; authkeyd holds as many descriptors
# after as before.
plug_and_unplug() {
    descriptors >"$work/fds.before"
    before=$(fd_count)
    added=$(event_count added)
    removed=$(event_count removed)
    cycle=1
    broken=""
    # A failed cycle ends the loop: the next would only wait out its timeouts.
    while [ $cycle -le "$1" ] && [ -z "$broken" ]; do
        plug
        wait_for 60 has_events added $((added + cycle)) || broken="no authenticators.added"
        if [ $((cycle % 2)) -eq 1 ]; then signal=KILL; else signal=TERM; fi
        unplug $signal || broken="$broken${broken:+, }authkeyd-virtkey exited $virtkey_status on SIG$signal"
        wait_for 60 has_events removed $((removed + cycle)) || broken="$broken${broken:+, }no authenticators.removed"
        cycle=$((cycle + 1))
    done
    seen_added=$(event_count added)
    seen_removed=$(event_count removed)
    if [ -z "$broken" ]; then
        pass "$1 plugs and unplugs, each seen by the watcher"
    else
        fail "plug and unplug number $((cycle - 1)) of $1: $broken"
    fi
    # Closing a key's device is asynchronous (its worker thread): let it settle.
    wait_for 10 fds_at_most "$before"
    after=$(fd_count)
    if [ "$after" -eq "$before" ]; then
        pass "authkeyd holds $before descriptors before and after"
    else
        fail "authkeyd held $before descriptors before and $after after"
        descriptors | diff "$work/fds.before" - || true
    fi
}

# Whether authkeyd holds a descriptor of NODE (it opens a key only while
# it uses it, and closes it after its linger).
daemon_holds() { ls -l "/proc/$daemon/fd" 2>/dev/null | grep -q -- "-> $1\$"; }
daemon_lets_go() { ! daemon_holds "$1"; }
# Whether PID holds a flock (not waits for one) on anything: /proc/locks.
holds_flock() { grep -Eq "^[0-9]+: FLOCK +ADVISORY +WRITE +$1 " /proc/locks; }

# direct_programs TAG WHEN NODE: the programs that open the key themselves
# through libfido2 (an exclusive flock on NODE while they use it), each a
# check ending in "WHEN": fido2-token -I; OpenSSH's own security-key
# support, no provider (ssh-keygen -t ecdsa-sk through ssh-sk-helper, then
# -Y sign and -Y verify); pam_u2f (pamu2fcfg enrols, pamtester
# authenticates through a PAM service naming pam_u2f.so). The key has no
# PIN and answers a touch by itself. A check whose enrolment failed is not
# tried further (it would only wait out libfido2's flock retries).
direct_programs() {
    tag=$1 when=$2 node=$3
    out="$work/direct-$tag"
    mkdir -p "$out"
    if timeout 60 fido2-token -I "$node" >"$out/info.txt" 2>&1 && grep -q "^aaguid: 61757468" "$out/info.txt"; then
        pass "fido2-token -I $node $when"
    else
        fail "fido2-token -I $node $when: $(tail -n 3 "$out/info.txt")"
    fi

    sk="$out/id_ecdsa_sk"
    if timeout 60 ssh-keygen -q -t ecdsa-sk -f "$sk" -N '' -C "vm-$tag" </dev/null >"$out/ssh-keygen.out" 2>&1; then
        pass "ssh-keygen -t ecdsa-sk (OpenSSH's own FIDO support) makes a key $when"
        echo "signed by a key made $when" >"$out/message"
        read -r type blob _ <"$sk.pub"
        echo "vm@authkeyd $type $blob" >"$out/allowed_signers"
        if timeout 60 ssh-keygen -Y sign -f "$sk" -n file "$out/message" </dev/null >"$out/sign.out" 2>&1; then
            pass "ssh-keygen -Y sign signs with it $when"
            if ssh-keygen -Y verify -f "$out/allowed_signers" -I vm@authkeyd -n file -s "$out/message.sig" \
                <"$out/message" >"$out/verify.out" 2>&1; then
                pass "ssh-keygen -Y verify: $(cat "$out/verify.out")"
            else
                fail "ssh-keygen -Y verify $when: $(cat "$out/verify.out")"
            fi
        else
            fail "ssh-keygen -Y sign $when: $(tail -n 3 "$out/sign.out")"
        fi
    else
        fail "ssh-keygen -t ecdsa-sk $when: $(tail -n 3 "$out/ssh-keygen.out")"
    fi

    # The guest's /etc/pam.d is a writable copy of the host's (vm/guest-init).
    if timeout 60 pamu2fcfg -u root -o pam://vm -i pam://vm </dev/null >"$out/u2f_keys" 2>"$out/pamu2fcfg.err" \
        && grep -q "^root:" "$out/u2f_keys"; then
        pass "pamu2fcfg enrols the key for pam_u2f $when"
        service="authkeyd-vm-$tag"
        echo "auth required pam_u2f.so debug authfile=$out/u2f_keys origin=pam://vm appid=pam://vm cue" >"/etc/pam.d/$service"
        if timeout 60 pamtester "$service" root authenticate </dev/null >"$out/pamtester.out" 2>&1; then
            pass "pam_u2f authenticates root with it (pamtester $service root authenticate) $when"
        else
            fail "pamtester $service root authenticate $when: $(grep -v '^debug(pam_u2f)' "$out/pamtester.out" | tail -n 3)"
            tail -n 20 "$out/pamtester.out"
        fi
    else
        fail "pamu2fcfg $when: $(tail -n 3 "$out/pamu2fcfg.err")"
    fi
}

# Stops what runs, prints the logs and the count, and exits with the
# number of failed checks.
finish() {
    [ -n "$virtkey" ] && kill -TERM "$virtkey" 2>/dev/null
    [ -n "$watcher" ] && stop_watcher
    [ -n "$daemon" ] && stop_daemon
    for log in "$work"/*.log; do
        [ -e "$log" ] || continue
        step "$(basename "$log")"
        cat "$log"
    done
    step "the watchers' notifications"
    cat "$work"/*.jsonl "$work"/*.err 2>/dev/null
    step "authkeyd-virtkey's output (every plug)"
    sort "$work/virtkey.out" 2>/dev/null | uniq -c
    step "the kernel's HID messages (the last few)"
    dmesg | grep -E "hid|uhid" | tail -n 4
    step "summary"
    echo "$passes check(s) passed, $failures failed"
    exit "$failures"
}
