# bash completion for ratescope-cli                                   -*- shell-script -*-
# Commands, options and algorithm names come from the binary itself (`ratescope-cli help
# --commands`, `help --options [COMMAND]`, `help --algorithms`, `COMMAND --help`), so they
# follow the installed version. Key names come from the server, and only when --url is on the
# line: `ratescope-cli --url URL keys --json --max 50 --match 'PREFIX*'`, quietly, for at most
# two seconds.

# Memoised answers of the binary, per binary and question, for this shell.
declare -gA _ratescope_cli_memo

_ratescope_cli_ask()
{
    local bin=$1
    shift
    local memo_key="$bin|$*"
    if [[ ! -v _ratescope_cli_memo[$memo_key] ]]; then
        _ratescope_cli_memo[$memo_key]=$("$bin" "$@" 2>/dev/null)
    fi
    printf '%s\n' "${_ratescope_cli_memo[$memo_key]}"
}

# Option names (--opt, and -h) of COMMAND, or the global ones without it.
_ratescope_cli_option_names()
{
    _ratescope_cli_ask "$1" help --options ${2:+"$2"} | tr ' ' '\n' | grep -- '^-'
}

# Does OPTION take a value (for COMMAND, or as a global option)? Prints its value's name.
_ratescope_cli_value_name()
{
    local bin=$1 command=$2 option=$3 line
    while read -r line; do
        [[ " $line " == *" $option "* ]] || continue
        line=${line##* }
        [[ $line == -* ]] || printf '%s\n' "$line"
        return
    done < <(_ratescope_cli_ask "$bin" help --options; [[ -n $command ]] && _ratescope_cli_ask "$bin" help --options "$command")
}

# Key names starting with PREFIX from the server at URL; nothing when it does not answer at once.
_ratescope_cli_keys()
{
    local bin=$1 url=$2 prefix=$3
    local glob
    glob=$(printf '%s' "$prefix" | sed 's/[][*?\\]/\\&/g')
    timeout 2 "$bin" --url "$url" keys --json --max 50 --match "$glob*" 2>/dev/null |
        sed -n 's/^.*"key":"\([^"\\]*\)".*$/\1/p'
}

_ratescope_cli()
{
    local cur prev words cword
    if declare -F _init_completion >/dev/null; then
        _init_completion -n : || return # keys and URLs are one word despite their colons
    else
        cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
        words=("${COMP_WORDS[@]}") cword=$COMP_CWORD
    fi
    _ratescope_cli_reply
    declare -F __ltrim_colon_completions >/dev/null && __ltrim_colon_completions "$cur"
} &&
    complete -F _ratescope_cli ratescope-cli

# The replies for cur, prev, words and cword of _ratescope_cli.
_ratescope_cli_reply()
{
    local bin=${words[0]}
    bin=${bin/#\~/$HOME}
    command -v "$bin" >/dev/null || return

    # The command is the first word that is neither an option nor a global option's value;
    # the words after it that are not options are its arguments (an action, then keys).
    local command="" url="" i word
    local -a arguments=()
    for ((i = 1; i < cword; i++)); do
        word=${words[i]}
        if [[ $word == -* ]]; then
            [[ $word == --url ]] && url=${words[i + 1]}
            [[ $word == --url=* ]] && url=${word#--url=}
            [[ $word == *=* ]] && continue
            [[ -n $(_ratescope_cli_value_name "$bin" "$command" "$word") ]] && ((i++))
        elif [[ -z $command ]]; then
            command=$word
        else
            arguments+=("$word")
        fi
    done

    if [[ $prev == -* && $cur != -* ]]; then
        local value
        value=$(_ratescope_cli_value_name "$bin" "$command" "$prev")
        if [[ -n $value ]]; then
            case $prev in
            --algo) COMPREPLY=($(compgen -W "$(_ratescope_cli_ask "$bin" help --algorithms)" -- "$cur")) ;;
            --score-unit) COMPREPLY=($(compgen -W "auto s ms us" -- "$cur")) ;;
            --url)
                COMPREPLY=($(compgen -W "redis:// rediss:// unix:/// redis-sentinel:// redis-cluster://" -- "$cur"))
                compopt -o nospace 2>/dev/null
                ;;
            --match | --key)
                [[ -n $url ]] && COMPREPLY=($(compgen -W "$(_ratescope_cli_keys "$bin" "$url" "$cur")" -- "$cur"))
                ;;
            *) [[ $value == FILE ]] && COMPREPLY=($(compgen -f -- "$cur")) ;;
            esac
            return
        fi
    fi

    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_ratescope_cli_option_names "$bin"; [[ -n $command ]] && _ratescope_cli_option_names "$bin" "$command")" -- "$cur"))
        return
    fi
    if [[ -z $command ]]; then
        COMPREPLY=($(compgen -W "$(_ratescope_cli_ask "$bin" help --commands)" -- "$cur"))
        return
    fi

    # The synopsis (first line of COMMAND --help) names the actions ("policy list | get NAME |
    # ...") and what follows them: a word of lower-case letters is an action, ALGO an
    # algorithm, KEY a key.
    local synopsis
    synopsis=$(_ratescope_cli_ask "$bin" "$command" --help | sed -n '1s/^Usage: ratescope-cli \[global options\] //p')
    synopsis=${synopsis#"$command"}
    local -a alternatives=() actions=()
    IFS=$'\x1f' read -r -a alternatives <<<"${synopsis// | /$'\x1f'}" # " | " parts, not ALGO|library
    local alternative first
    for alternative in "${alternatives[@]}"; do
        read -r first _ <<<"$alternative"
        [[ $first =~ ^[a-z]+$ ]] && actions+=("$first")
    done
    if ((${#actions[@]} > 0 && ${#arguments[@]} == 0)); then
        COMPREPLY=($(compgen -W "${actions[*]}" -- "$cur"))
        return
    fi
    local what=""
    for alternative in "${alternatives[@]}"; do
        local -a tokens=()
        read -r -a tokens <<<"$alternative"
        if ((${#actions[@]} > 0)); then
            [[ ${tokens[0]} == "${arguments[0]}" ]] || continue
            what=${tokens[1]}
        else
            what=${tokens[0]}
        fi
        break
    done
    case $what in
    KEY*) [[ -n $url ]] && COMPREPLY=($(compgen -W "$(_ratescope_cli_keys "$bin" "$url" "$cur")" -- "$cur")) ;;
    ALGO*) COMPREPLY=($(compgen -W "$(_ratescope_cli_ask "$bin" help --algorithms) ${what#ALGO|}" -- "$cur")) ;;
    esac
}

# ex: filetype=sh
