# The old name of lib.sh (the bandwidth tests' helpers, now merged into it):
# kept so that a test file written against it still works. New tests source
# lib.sh.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
