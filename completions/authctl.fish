# fish completion for authctl(1), the command line of authkeyd.
# Installed as $(PREFIX)/share/fish/vendor_completions.d/authctl.fish.

# The ids of the keys authkeyd serves now, with their product names.
function __authctl_keys
    set -l socket
    set -l words (commandline -opc)
    for i in (seq (count $words))
        if test "$words[$i]" = --socket; and test $i -lt (count $words)
            set socket --socket $words[(math $i + 1)]
        end
    end
    authctl $socket list 2>/dev/null | awk 'NR > 1 { id = $1; $1 = ""; print id "\t" substr($0, 2) }'
end

# The words of the command line that are neither options nor their values:
# the command, then its operands.
function __authctl_words
    set -l words (commandline -opc)
    set -e words[1]
    set -l valued --socket --timeout --rp --rp-name --user --display-name --user-id --challenge --origin --uv \
        --attestation --algorithm --authenticator --name --pin-fd --pinentry --authfile --appid --format --credential --transaction
    set -l skip 0
    for word in $words
        if test $skip = 1
            set skip 0
        else if contains -- $word $valued
            set skip 1
        else if not string match -q -- '-*' $word
            echo $word
        end
    end
end

function __authctl_needs_command
    test (count (__authctl_words)) = 0
end

# True when the command is $argv[1] and it has $argv[2] operands so far
# (any number when not given).
function __authctl_using
    set -l words (__authctl_words)
    test (count $words) -ge 1; and test "$words[1]" = $argv[1]; or return 1
    test (count $argv) -lt 2; or test (math (count $words) - 1) = $argv[2]
end

complete -c authctl -f
complete -c authctl -l socket -r -F -d "authkeyd's socket"
complete -c authctl -l json -d "print the protocol's JSON"
complete -c authctl -l help -d 'show the usage'
complete -c authctl -l version -d 'show the version'

complete -c authctl -n __authctl_needs_command -a list -d 'the security keys authkeyd serves'
complete -c authctl -n __authctl_needs_command -a info -d 'one key in detail'
complete -c authctl -n __authctl_needs_command -a watch -d 'report keys as they come and go'
complete -c authctl -n __authctl_needs_command -a select -d 'touch-to-select a key'
complete -c authctl -n __authctl_needs_command -a register -d 'register a credential (WebAuthn create)'
complete -c authctl -n __authctl_needs_command -a assert -d 'authenticate with a credential (WebAuthn get)'
complete -c authctl -n __authctl_needs_command -a registrations -d "authkeyd's record of your registrations"
complete -c authctl -n __authctl_needs_command -a agent -d 'answer the prompts of programs that cannot ask'
complete -c authctl -n __authctl_needs_command -a pam -d "your line of pam_u2f's authfile, for pam_authkeyd"
complete -c authctl -n __authctl_needs_command -a pin -d "set or change a key's PIN, or show the attempts left"
complete -c authctl -n __authctl_needs_command -a reset -d 'erase every credential on a key'
complete -c authctl -n __authctl_needs_command -a credentials -d 'the discoverable credentials on a key'
complete -c authctl -n __authctl_needs_command -a fingerprints -d "the fingerprints a key's sensor knows"
complete -c authctl -n __authctl_needs_command -a config -d "a key's configuration"

complete -c authctl -n '__authctl_using info 0' -a '(__authctl_keys)'
complete -c authctl -n '__authctl_using select' -l timeout -x -d 'seconds to wait'

# register and assert.
for command in register assert
    set -l when "__authctl_using $command"
    complete -c authctl -n $when -l rp -x -d 'the relying party id'
    complete -c authctl -n $when -l challenge -x -d 'the challenge, base64url'
    complete -c authctl -n $when -l origin -x -d 'the origin in the client data'
    complete -c authctl -n $when -l uv -x -a 'required preferred discouraged' -d 'user verification'
    complete -c authctl -n $when -l authenticator -x -a '(__authctl_keys)' -d 'use this key'
    complete -c authctl -n $when -l pin-fd -x -d 'read PINs from this file descriptor'
    complete -c authctl -n $when -l yes -d 'sign the transaction'
    complete -c authctl -n $when -l no -d 'do not sign the transaction'
    complete -c authctl -n $when -l format -x -a fido2-tools -d 'output format'
    complete -c authctl -n $when -l timeout -x -d 'seconds the operation may take'
end
complete -c authctl -n '__authctl_using register' -l rp-name -x -d 'the relying party name'
complete -c authctl -n '__authctl_using register' -l user -x -d 'the user name'
complete -c authctl -n '__authctl_using register' -l display-name -x -d 'the user display name'
complete -c authctl -n '__authctl_using register' -l user-id -x -d 'the user handle, base64url'
complete -c authctl -n '__authctl_using register' -l resident -d 'a discoverable credential'
complete -c authctl -n '__authctl_using register' -l attestation -x -a 'none direct' -d 'attestation conveyance'
complete -c authctl -n '__authctl_using register' -l algorithm -x -a 'es256 eddsa rs256 eddsa,es256' -d 'signature algorithms, most preferred first'
complete -c authctl -n '__authctl_using register' -l name -x -d 'the name for the key'
complete -c authctl -n '__authctl_using assert' -l credential -x -d 'a credential id to allow, base64url'
complete -c authctl -n '__authctl_using assert' -l transaction -x -d 'a detail to confirm, LABEL=VALUE'
complete -c authctl -n '__authctl_using assert' -l user -x -d 'the account, when the key holds several'

complete -c authctl -n '__authctl_using registrations 0' -a 'list rename delete'
complete -c authctl -n '__authctl_using pam 0' -a 'register list'
complete -c authctl -n '__authctl_using pam' -l origin -x -d 'the relying party, pam://HOST'
complete -c authctl -n '__authctl_using pam' -l authfile -r -F -d 'the authfile'
complete -c authctl -n '__authctl_using pam' -l appid -x -d 'the relying party name'
complete -c authctl -n '__authctl_using pam' -l resident -d 'a discoverable credential'
complete -c authctl -n '__authctl_using pam' -l no-presence -d 'no touch demanded at login'
complete -c authctl -n '__authctl_using pam' -l verification -d 'the key verifies the user at login'
complete -c authctl -n '__authctl_using pam' -l pin-verification -d 'the PIN at login'
complete -c authctl -n '__authctl_using pam' -l algorithm -x -a 'es256 eddsa rs256' -d 'the signature algorithm'
complete -c authctl -n '__authctl_using pam' -l authenticator -x -a '(__authctl_keys)' -d 'use this key'
complete -c authctl -n '__authctl_using pam' -l print -d 'print the line instead'
complete -c authctl -n '__authctl_using pam' -l pin-fd -x -d 'read PINs from this file descriptor'
complete -c authctl -n '__authctl_using pam' -l name -x -d 'the name for the key'
complete -c authctl -n '__authctl_using pam' -l timeout -x -d 'seconds the operation may take'
complete -c authctl -n '__authctl_using agent' -l once -d 'answer for one request, then exit'
complete -c authctl -n '__authctl_using agent' -l desktop -d 'desktop dialogs: pinentry, zenity, notifications'
complete -c authctl -n '__authctl_using agent' -l pinentry -x -a '(__fish_complete_command)' -d 'the pinentry program'

# Key management.
for command in pin credentials fingerprints config
    complete -c authctl -n "__authctl_using $command" -l pin-fd -x -d 'read PINs from this file descriptor'
    complete -c authctl -n "__authctl_using $command 1" -a '(__authctl_keys)'
end
complete -c authctl -n '__authctl_using pin 0' -a 'set change retries'
complete -c authctl -n '__authctl_using reset 0' -a '(__authctl_keys)'
complete -c authctl -n '__authctl_using reset' -l yes-really -d 'do not ask for the product name'
complete -c authctl -n '__authctl_using credentials 0' -a 'list delete update'
complete -c authctl -n '__authctl_using credentials' -l rp -x -d 'only this relying party'
complete -c authctl -n '__authctl_using credentials' -l user -x -d 'the new user name'
complete -c authctl -n '__authctl_using credentials' -l display-name -x -d 'the new display name'
complete -c authctl -n '__authctl_using fingerprints 0' -a 'info list enroll rename delete'
complete -c authctl -n '__authctl_using fingerprints' -l name -x -d "the new fingerprint's name"
complete -c authctl -n '__authctl_using config 0' -a 'always-uv min-pin-length'
complete -c authctl -n '__authctl_using config 2; and contains -- always-uv (__authctl_words)' -a 'on off'
complete -c authctl -n '__authctl_using config' -l rp -x -d 'a relying party that may read the minimum PIN length'
complete -c authctl -n '__authctl_using config' -l force-change -d 'demand a new PIN now'
