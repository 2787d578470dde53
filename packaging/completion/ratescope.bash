# bash completion for ratescope (the console)                         -*- shell-script -*-
# Options come from `ratescope --help` (it needs no display), profile names from the console's
# settings file, key names (--open-key, --pin) from the server only when --url is on the line
# and ratescope-cli is installed, for at most two seconds.

# Profile names saved by the console: keys "<name>\transport" of the [profiles] section of
# QSettings' ratescope.conf, each name percent-encoded twice (by Ratescope, then by QSettings).
_ratescope_profiles()
{
    local conf=${XDG_CONFIG_HOME:-$HOME/.config}/Ratescope/ratescope.conf line name
    [[ -r $conf ]] || return
    local section=""
    while IFS= read -r line; do
        line=${line%$'\r'}
        if [[ $line == \[*\] ]]; then
            section=$line
        elif [[ $section == "[profiles]" && $line == *'\transport='* ]]; then
            name=${line%%'\transport='*}
            name=$(printf '%b' "${name//%/\\x}")
            printf '%b\n' "${name//%/\\x}"
        fi
    done <"$conf"
}

_ratescope()
{
    local cur prev words cword
    if declare -F _init_completion >/dev/null; then
        _init_completion -n : || return
    else
        cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
        words=("${COMP_WORDS[@]}") cword=$COMP_CWORD
    fi
    local bin=${words[0]}
    bin=${bin/#\~/$HOME}
    command -v "$bin" >/dev/null || return

    local url="" i
    for ((i = 1; i < cword; i++)); do
        [[ ${words[i]} == --url ]] && url=${words[i + 1]}
    done

    case $prev in
    --profile)
        local IFS=$'\n' name
        local -a names=()
        while IFS= read -r name; do
            [[ $name == "$cur"* ]] && names+=("$(printf '%q' "$name")")
        done < <(_ratescope_profiles)
        COMPREPLY=("${names[@]}")
        ;;
    --tab) COMPREPLY=($(compgen -W "overview monitor burst policies whatif hot audit lookup" -- "$cur")) ;;
    --screenshot | --event-log) COMPREPLY=($(compgen -f -- "$cur")) ;;
    --monitor-interval) COMPREPLY=($(compgen -W "100ms 250ms 500ms 1s 2s 5s 10s" -- "$cur")) ;;
    --url)
        COMPREPLY=($(compgen -W "redis:// rediss:// unix:/// redis-sentinel:// redis-cluster://" -- "$cur"))
        compopt -o nospace 2>/dev/null
        ;;
    --open-key | --pin)
        # ratescope-cli beside the console (or on PATH) lists the keys.
        local cli glob
        cli=$(dirname -- "$(command -v "$bin")")/ratescope-cli
        [[ -x $cli ]] || cli=$(command -v ratescope-cli) || return
        [[ -n $url ]] || return
        glob=$(printf '%s' "$cur" | sed 's/[][*?\\]/\\&/g')
        COMPREPLY=($(compgen -W "$(timeout 2 "$cli" --url "$url" keys --json --max 50 --match "$glob*" 2>/dev/null |
            sed -n 's/^.*"key":"\([^"\\]*\)".*$/\1/p')" -- "$cur"))
        ;;
    --screenshot-after | --window-size | --lookup | --edit-policy | --hot-every | --burst | --reset) ;;
    *)
        if [[ $cur == -* ]]; then
            # Qt's help: "  -h, --help   Show ..." and "  --url <URL>   Connect ...".
            local options
            options=$("$bin" --help 2>/dev/null | sed -n 's/^  \(-[^ ,]*\)\(, \(-[^ ]*\)\)\{0,1\} .*/\1 \3/p')
            COMPREPLY=($(compgen -W "$options" -- "$cur"))
        fi
        ;;
    esac
    declare -F __ltrim_colon_completions >/dev/null && __ltrim_colon_completions "$cur"
} &&
    complete -F _ratescope ratescope

# ex: filetype=sh
