#!/bin/sh
# `npm start`, `npm run migrate`, `npm run token` and `npm run import` run dist/. On a checkout this builds it first,
# but only when a source is newer than dist/main.js: a full build takes half a minute, and a test may run these
# commands while its service runs from dist/. package.json calls this only when TypeScript is installed; the image has neither it nor scripts/.
set -e
cd "$(dirname "$0")/.."
if [ -f dist/main.js ] && [ -z "$(find src tsconfig.json tsconfig.build.json -newer dist/main.js -print -quit)" ]; then
  exit 0
fi
exec npm run --silent build
