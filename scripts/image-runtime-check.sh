#!/usr/bin/env bash
# The Docker image's runtime stage, reproduced without a container engine (issue 16: its documented commands
# failed there). Read from the Dockerfile: the runtime stage's COPY lines fill an empty folder, its RUN lines are
# each reproduced or skipped for a stated reason (one this script does not know fails it), its ENV is the
# environment, its USER's stand-in is a non-root user. Then, as in the image: migrate, token, start (its CMD), health
# (its HEALTHCHECK), metrics with the token, an import, SIGTERM → exit 0, and a start without DATABASE_URL refused.
# The build stage's output is this checkout's dist/: run `npm run build` first. DATABASE_URL is a throwaway
# database on the machine's PostgreSQL (IMAGE_CHECK_ADMIN_URL, default postgres://postgres@127.0.0.1:5432/postgres).
# Run from the project root: bash scripts/image-runtime-check.sh
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"
admin_url="${IMAGE_CHECK_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/postgres}"

ok() { echo "OK   $1"; }
skip() { echo "SKIP $1"; }
die() {
  echo "FAIL $1" >&2
  exit 1
}

[ -f dist/main.js ] || die "dist/main.js is missing: run npm run build first"

work="$(mktemp -d)"
app="$work/app"
database="inventory_image_check_$$"
service_pid=""
cleanup() {
  if [ -n "$service_pid" ]; then kill -KILL "$service_pid" 2>/dev/null || true; fi
  psql "$admin_url" -q -c "DROP DATABASE IF EXISTS $database WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
# The run user reads the application (root-owned, as in the image) and writes only its HOME and the data folder.
chmod 755 "$work"
mkdir -p "$app" "$work/home"

# The runtime stage's instructions, one a line: continuation lines joined, comments and blank lines left out.
runtime_stage() {
  awk '
    /^[[:space:]]*#/ { next }
    { line = line $0 }
    /\\[[:space:]]*$/ { sub(/\\[[:space:]]*$/, "", line); next }
    {
      sub(/^[[:space:]]+/, "", line); sub(/[[:space:]]+$/, "", line)
      if (line != "") {
        if (toupper(line) ~ /^FROM /) runtime = (tolower(line) ~ / as runtime$/)
        else if (runtime) print line
      }
      line = ""
    }
  ' Dockerfile
}

# A JSON array (CMD, HEALTHCHECK CMD) as NUL-separated words.
# shellcheck disable=SC2016 # JavaScript, not shell, in single quotes
json_words() { node -e 'for (const word of JSON.parse(process.argv[1])) process.stdout.write(`${word}\0`)' "$1"; }

# Docker's COPY: a directory's contents into the destination, a file into a destination ending in / or as it.
copy_into_app() {
  local destination="$app/${1#./}"
  shift
  for source in "$@"; do
    if [ -d "$source" ]; then
      mkdir -p "$destination" && cp -R "$source/." "$destination/"
    elif [[ "$destination" == */ ]]; then
      mkdir -p "$destination" && cp "$source" "$destination"
    else
      mkdir -p "$(dirname "$destination")" && cp "$source" "$destination"
    fi
  done
}

# The one folder the image's user may write to: `mkdir -p /app/X && chown user:group /app/X`.
writable_folder='^mkdir -p /app/([^ ]+) && chown [^ ]+ /app/([^ ]+)$'
image_env=()
image_user=""
cmd=()
healthcheck=()
while IFS= read -r instruction; do
  keyword="${instruction%% *}"
  arguments="${instruction#* }"
  case "${keyword^^}" in
    ENV)
      read -ra pairs <<<"$arguments"
      image_env+=("${pairs[@]}")
      ;;
    WORKDIR)
      [ "$arguments" = /app ] || die "WORKDIR $arguments: this check maps /app (build and runtime stage) only"
      ;;
    COPY)
      read -ra words <<<"$arguments"
      if [[ "${words[0]}" == --from=build ]]; then
        # The build stage works in /app on a copy of this checkout: its /app/dist is the checkout's dist/.
        sources=("${words[@]:1:${#words[@]}-2}")
        sources=("${sources[@]/#\/app\//$root/}")
      elif [[ "${words[0]}" == --* ]]; then
        die "COPY ${words[0]}: this check does not reproduce it"
      else
        sources=("${words[@]:0:${#words[@]}-1}")
      fi
      copy_into_app "${words[-1]}" "${sources[@]}"
      ok "COPY $arguments"
      ;;
    RUN)
      run="$(tr -s ' ' <<<"$arguments")"
      if [ "$run" = "npm ci --omit=dev --omit=optional && npm cache clean --force" ]; then
        # This machine's npm cache is shared: it is used, not cleaned.
        (cd "$app" && npm ci --omit=dev --omit=optional --no-audit --no-fund) >"$work/npm-ci.log" 2>&1 ||
          {
            cat "$work/npm-ci.log" >&2
            die "npm ci --omit=dev --omit=optional"
          }
        ok "RUN npm ci --omit=dev --omit=optional: $(grep -o 'added [0-9]* packages' "$work/npm-ci.log") (the shared cache stays)"
      elif [ "$run" = "apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/*" ]; then
        skip "RUN apt-get install tini: here SIGTERM goes to node directly, as tini (PID 1 in the image) passes it on"
      elif [[ "$run" =~ $writable_folder ]] &&
        [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ]; then
        writable="$app/${BASH_REMATCH[1]}"
        mkdir -p "$writable"
        ok "RUN $run (for the run user below)"
      else
        die "RUN $run: this check does not reproduce it; teach scripts/image-runtime-check.sh"
      fi
      ;;
    USER) image_user="$arguments" ;;
    CMD) mapfile -d '' cmd < <(json_words "$arguments") ;;
    HEALTHCHECK) mapfile -d '' healthcheck < <(json_words "${arguments#* CMD }") ;;
    EXPOSE | ENTRYPOINT) ;;
    *) die "$keyword in the runtime stage: this check does not reproduce it" ;;
  esac
done < <(runtime_stage)
[ "${#cmd[@]}" -gt 0 ] || die "the runtime stage has no CMD"
[ "${#healthcheck[@]}" -gt 0 ] || die "the runtime stage has no HEALTHCHECK CMD"

# Issue 37: the image ships no PostgreSQL server binaries (the embedded one's optional package is left out).
postgres_binaries="$(find "$app" \( -name postgres -o -name initdb -o -name pg_ctl \) -type f | sed "s|^$app/||")"
[ -z "$postgres_binaries" ] || die "the runtime stage holds PostgreSQL binaries: $postgres_binaries"
ok "the runtime stage holds no PostgreSQL binaries ($(du -sh "$app/node_modules" | cut -f1) of node_modules)"

compiled_tests="$(find "$app/dist" -name '*.test.js' | sed "s|^$app/||")"
[ -z "$compiled_tests" ] || die "dist/ holds compiled tests (rm -rf dist && npm run build?): $compiled_tests"
ok "dist/ holds no compiled tests"

# The image runs as $image_user; here a user of that name if there is one, else nobody; without root, the caller.
as_user=()
if [ "$(id -u)" -ne 0 ]; then
  skip "the user switch to a non-root user: this check runs as $(id -un), not root"
elif ! command -v setpriv >/dev/null; then
  skip "the user switch to a non-root user: setpriv (util-linux) is not installed"
else
  run_user="$image_user"
  id "$run_user" >/dev/null 2>&1 || run_user=nobody
  as_user=(setpriv --reuid="$(id -u "$run_user")" --regid="$(id -g "$run_user")" --clear-groups --)
  chown "$run_user" "$work/home" ${writable:+"$writable"}
  ok "runs as $run_user (the image's USER is $image_user)"
fi

port="$(node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')"
psql "$admin_url" -v ON_ERROR_STOP=1 -q -c "CREATE DATABASE $database" >/dev/null
# shellcheck disable=SC2016 # JavaScript, not shell, in single quotes
database_url="$(node -e 'const u = new URL(process.argv[1]); u.pathname = `/${process.argv[2]}`; console.log(u.href)' "$admin_url" "$database")"
secret="image-check-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"

# As in the container: in /app, only the image's environment and what `docker run -e` would add (the leading
# NAME=value arguments), as the image's user.
cd "$app"
# The node image's PATH (plus where this machine's node is): the caller's may hold the checkout's dev tools.
image_path="$(dirname "$(command -v node)"):/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
as_image_user() {
  local settings=()
  while [ "$#" -gt 0 ] && [[ "$1" == [A-Z]*=* ]]; do
    settings+=("$1")
    shift
  done
  env -i PATH="$image_path" HOME="$work/home" "${image_env[@]}" PORT="$port" "${settings[@]}" "${as_user[@]}" "$@"
}

usage="$(as_image_user npm run --silent migrate -- --help 2>&1)" || die "npm run migrate -- --help: $usage"
[[ "$usage" == "Usage: node dist/db/migrate-cli.js"* ]] || die "npm run migrate -- --help: $usage"
ok "npm run migrate -- --help prints the usage"

status=0
as_image_user npm run --silent token -- --bogus >/dev/null 2>"$work/token.err" || status=$?
if [ "$status" -ne 2 ] || ! grep -q "^Unknown option '--bogus'.$" "$work/token.err"; then
  die "npm run token -- --bogus: exit $status, $(cat "$work/token.err")"
fi
ok "npm run token -- --bogus is refused with exit 2"

as_image_user DATABASE_URL="$database_url" AUTH_JWT_SECRET="$secret" npm run --silent migrate >"$work/migrate.log" ||
  die "npm run migrate: $(cat "$work/migrate.log")"
grep -q '"msg":"migrations applied"' "$work/migrate.log" || die "npm run migrate applied nothing: $(cat "$work/migrate.log")"
ok "npm run migrate applies the migrations to DATABASE_URL"

token="$(as_image_user AUTH_JWT_SECRET="$secret" npm run --silent token -- image-check 1)" || die "npm run token"
[[ "$token" =~ ^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$ ]] || die "npm run token printed: $token"
ok "npm run token -- image-check 1 prints only a token"

status=0
as_image_user AUTH_JWT_SECRET="$secret" "${cmd[@]}" >"$work/refused.log" 2>&1 || status=$?
if [ "$status" -ne 1 ] || ! grep -q '^Invalid configuration: DATABASE_URL: .*EMBEDDED_POSTGRES=true' "$work/refused.log"; then
  die "${cmd[*]} without DATABASE_URL: exit $status, $(cat "$work/refused.log")"
fi
ok "${cmd[*]} without DATABASE_URL exits 1 naming DATABASE_URL and EMBEDDED_POSTGRES"

status=0
as_image_user AUTH_JWT_SECRET="$secret" EMBEDDED_POSTGRES=true DATA_DIR="$work/home/data" "${cmd[@]}" \
  >"$work/embedded.log" 2>&1 || status=$?
if [ "$status" -eq 0 ] || ! grep -q 'The embedded PostgreSQL is not installed here' "$work/embedded.log"; then
  die "${cmd[*]} with EMBEDDED_POSTGRES=true: exit $status, $(tail -n 5 "$work/embedded.log")"
fi
ok "${cmd[*]} with EMBEDDED_POSTGRES=true exits $status: the image has no embedded PostgreSQL"

# A simple command, not the function: env and setpriv exec, so the pid is node's own (tini's child in the image).
env -i PATH="$image_path" HOME="$work/home" "${image_env[@]}" PORT="$port" DATABASE_URL="$database_url" \
  AUTH_JWT_SECRET="$secret" "${as_user[@]}" "${cmd[@]}" >"$work/service.log" 2>&1 &
service_pid=$!
healthy=""
for _ in $(seq 1 60); do
  if as_image_user "${healthcheck[@]}" 2>/dev/null; then
    healthy=yes
    break
  fi
  kill -0 "$service_pid" 2>/dev/null || break
  sleep 0.5
done
[ -n "$healthy" ] || die "${cmd[*]} never became healthy: $(cat "$work/service.log")"
ok "${cmd[*]} starts and its HEALTHCHECK passes"

metrics="$(curl -sS -H "Authorization: Bearer $token" "http://127.0.0.1:$port/actuator/prometheus")"
grep -q '^db_pool_connections [0-9]' <<<"$metrics" || die "/actuator/prometheus with the token: $(head -c 500 <<<"$metrics")"
unauthenticated="$(curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/actuator/prometheus")"
[ "$unauthenticated" = 401 ] || die "/actuator/prometheus without a token answered $unauthenticated"
ok "/actuator/prometheus answers the token from npm run token (and 401 without it)"

printf 'sku,baseUnitMagnitude,baseUnitCode,description\nIMAGE-1,1,PC,"one, first"\nIMAGE-2,2.5,KG,\n' >"$work/products.csv"
chmod 644 "$work/products.csv"
# The summary comes on stdout, the Idempotency-Key and progress on stderr (D38). Run again, the same file is a
# replay of the first answer; without the key it is a new import of stored SKUs, refused with 409.
import_products() {
  as_image_user TOKEN="$token" npm run --silent import -- --url "http://127.0.0.1:$port" "$@" "$work/products.csv" \
    >"$work/import.out" 2>"$work/import.err"
}
import_products || die "npm run import: $(cat "$work/import.out" "$work/import.err")"
grep -q '^Imported 2 Products in ' "$work/import.out" || die "npm run import: $(cat "$work/import.out" "$work/import.err")"
grep -q '^Idempotency-Key: [0-9a-f]\{64\}$' "$work/import.err" || die "npm run import named no key: $(cat "$work/import.err")"
import_products || die "npm run import, run again: $(cat "$work/import.out" "$work/import.err")"
grep -q '^Imported 2 Products in .*: 2 created, 0 skipped' "$work/import.out" ||
  die "npm run import, run again, did not replay the first answer: $(cat "$work/import.out" "$work/import.err")"
status=0
import_products --no-idempotency-key || status=$?
if [ "$status" -ne 1 ] || ! grep -q '^Import refused, nothing stored: HTTP 409 Conflict: ' "$work/import.err"; then
  die "npm run import --no-idempotency-key of stored SKUs: exit $status, $(cat "$work/import.out" "$work/import.err")"
fi
ok "npm run import streams a CSV file, a second run replays its answer, and without the key it exits 1 with the 409"

kill -TERM "$service_pid"
status=0
wait "$service_pid" || status=$?
service_pid=""
[ "$status" -eq 0 ] || die "after SIGTERM the service exited $status: $(tail -n 5 "$work/service.log")"
ok "SIGTERM: the service exits 0"

echo "image runtime check: all checks passed in ${SECONDS} s"
