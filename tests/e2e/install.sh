#!/usr/bin/env bash
# Install the pinned Claude Code and Codex CLIs for the end-to-end tests (tests/e2e/).
#
# They go into .e2e/ at the top of the checkout (git-ignored), never globally:
#   .e2e/node_modules/.bin/claude    .e2e/node_modules/.bin/codex
# Without node or npm this prints ONE loud line and exits 0 (the e2e tests then skip, loudly);
# with them, a failed install exits 1 (in CI that fails the run).  Re-running is cheap: an
# installed pinned version is kept.
set -euo pipefail
cd "$(dirname "$0")/../.."

CLAUDE_CODE_VERSION="2.1.332"   # npm view @anthropic-ai/claude-code version (pinned 2026-12-04)
CODEX_VERSION="0.171.0"         # npm view @openai/codex version (pinned 2026-12-04)
prefix=".e2e"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "E2E SKIPPED: node/npm not found; the real Claude Code and Codex CLIs cannot be installed, tests/e2e will skip" >&2
    exit 0
fi

installed() {  # installed PACKAGE VERSION: is exactly that version already in the prefix?
    node -e 'const p=require(process.argv[1]); process.exit(p.version===process.argv[2]?0:1)' \
        "./$prefix/node_modules/$1/package.json" "$2" >/dev/null 2>&1
}

if installed @anthropic-ai/claude-code "$CLAUDE_CODE_VERSION" && installed @openai/codex "$CODEX_VERSION"; then
    echo "e2e: Claude Code $CLAUDE_CODE_VERSION and Codex $CODEX_VERSION already installed in $prefix/"
    exit 0
fi

mkdir -p "$prefix"
[ -f "$prefix/package.json" ] || echo '{"name": "mindos-e2e-clients", "private": true}' > "$prefix/package.json"
echo "e2e: installing @anthropic-ai/claude-code@$CLAUDE_CODE_VERSION and @openai/codex@$CODEX_VERSION into $prefix/"
if ! npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error --save-exact \
        "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" "@openai/codex@$CODEX_VERSION"; then
    echo "E2E INSTALL FAILED: npm could not install the pinned Claude Code / Codex CLIs (see above)" >&2
    exit 1
fi
