# bash completion for authctl(1), the command line of authkeyd.
# Installed as $(PREFIX)/share/bash-completion/completions/authctl.

# The ids of the keys authkeyd serves now (the first column of `authctl
# list`), asked of the same socket the command line names.
_authctl_keys() {
    local socket=() i
    for ((i = 1; i < ${#COMP_WORDS[@]} - 1; i++)); do
        [[ ${COMP_WORDS[i]} == --socket ]] && socket=(--socket "${COMP_WORDS[i + 1]}")
    done
    authctl "${socket[@]}" list 2>/dev/null | awk 'NR > 1 { print $1 }'
}

_authctl() {
    local cur prev words cword
    if declare -F _init_completion >/dev/null; then
        _init_completion || return
    else
        cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
        words=("${COMP_WORDS[@]}") cword=$COMP_CWORD
    fi

    local commands="list info watch select register assert registrations agent pam pin reset credentials fingerprints config"
    local global="--socket --json --help --version"

    # The values options take.
    case $prev in
        --socket) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --authenticator) COMPREPLY=($(compgen -W "$(_authctl_keys)" -- "$cur")); return ;;
        --uv) COMPREPLY=($(compgen -W "required preferred discouraged" -- "$cur")); return ;;
        --attestation) COMPREPLY=($(compgen -W "none direct" -- "$cur")); return ;;
        --algorithm) COMPREPLY=($(compgen -W "es256 eddsa rs256 eddsa,es256" -- "$cur")); return ;;
        --format) COMPREPLY=($(compgen -W "fido2-tools" -- "$cur")); return ;;
        --pin-fd) COMPREPLY=($(compgen -W "0 3 4 5" -- "$cur")); return ;;
        --pinentry) COMPREPLY=($(compgen -c -- "${cur:-pinentry}" | sort -u)); return ;;
        --authfile) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --origin | --appid) [[ -z $cur ]] && COMPREPLY=("pam://$(hostname)"); return ;;
        --rp | --rp-name | --user | --display-name | --user-id | --challenge | --origin | --name | \
            --credential | --transaction | --timeout) return ;;
    esac

    # The command and its operands, options skipped (with their values).
    local command="" operands=() i
    for ((i = 1; i < cword; i++)); do
        case ${words[i]} in
            --socket | --authenticator | --uv | --attestation | --algorithm | --format | --pin-fd | --pinentry | --authfile | --appid | --rp | --rp-name | --user | \
                --display-name | --user-id | --challenge | --origin | --name | --credential | --transaction | --timeout)
                ((i++)) ;;
            -*) ;;
            *) if [[ -z $command ]]; then command=${words[i]}; else operands+=("${words[i]}"); fi ;;
        esac
    done

    local options="" choices=""
    case $command in
        "") choices=$commands ;;
        info) [[ ${#operands[@]} -eq 0 ]] && choices=$(_authctl_keys) ;;
        select) options="--timeout" ;;
        register)
            options="--rp --rp-name --user --display-name --user-id --resident --attestation --algorithm --name --challenge
                --origin --uv --authenticator --pin-fd --yes --no --format --timeout" ;;
        assert)
            options="--rp --credential --transaction --user --challenge --origin --uv --authenticator --pin-fd --yes
                --no --format --timeout" ;;
        registrations) [[ ${#operands[@]} -eq 0 ]] && choices="list rename delete" ;;
        agent) options="--once --desktop --pinentry" ;;
        pam)
            case ${operands[0]:-} in
                register)
                    options="--origin --appid --resident --no-presence --verification --pin-verification --algorithm --authenticator
                        --authfile --print --pin-fd --name --timeout" ;;
                *) options="--origin --authfile" ;;
            esac
            [[ ${#operands[@]} -eq 0 ]] && choices="register list" ;;
        pin)
            options="--pin-fd"
            case ${#operands[@]} in 0) choices="set change retries" ;; 1) choices=$(_authctl_keys) ;; esac ;;
        reset)
            options="--yes-really"
            [[ ${#operands[@]} -eq 0 ]] && choices=$(_authctl_keys) ;;
        credentials)
            options="--rp --user --display-name --pin-fd"
            case ${#operands[@]} in 0) choices="list delete update" ;; 1) choices=$(_authctl_keys) ;; esac ;;
        fingerprints)
            options="--name --pin-fd"
            case ${#operands[@]} in 0) choices="info list enroll rename delete" ;; 1) choices=$(_authctl_keys) ;; esac ;;
        config)
            options="--rp --force-change --pin-fd"
            case ${#operands[@]} in
                0) choices="always-uv min-pin-length" ;;
                1) choices=$(_authctl_keys) ;;
                2) [[ ${operands[0]} == always-uv ]] && choices="on off" ;;
            esac ;;
    esac

    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$options $global" -- "$cur"))
    else
        COMPREPLY=($(compgen -W "$choices" -- "$cur"))
    fi
}

complete -F _authctl authctl
