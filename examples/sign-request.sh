#!/usr/bin/env bash
# Sends one signed request with curl + openssl, for keys created with signing_required: true.
#
#   signed string = "<unix_ts>.<METHOD>.<path with query string>." followed by the raw body
#   X-Svc-Timestamp: <unix_ts>
#   X-Svc-Signature: v1=<hex HMAC-SHA256 of the signed string under the signing secret>
#
# Usage:
#   SVC_BASE_URL=http://127.0.0.1:3000 \
#   SVC_API_KEY=svc_test_... SVC_SIGNING_SECRET=svc_sign_... \
#   ./sign-request.sh GET '/api/v1/markets?limit=1'
#   ./sign-request.sh POST /api/v1/security/mfa/step-up '{"code":"123456"}'
#
# The path starts at /api/v1 and includes the query string exactly as sent. The body is sent
# byte for byte as signed (--data-binary). SVC_TIMESTAMP overrides the clock (unix seconds);
# the server accepts +/-300 s. Prints the response body, then a last line "HTTP <status>".
set -euo pipefail

command -v openssl >/dev/null 2>&1 || { echo "sign-request.sh: openssl is required" >&2; exit 127; }
command -v curl >/dev/null 2>&1 || { echo "sign-request.sh: curl is required" >&2; exit 127; }

: "${SVC_BASE_URL:?set SVC_BASE_URL, e.g. http://127.0.0.1:3000 (npm start) or your staging URL}"
: "${SVC_API_KEY:?set SVC_API_KEY (svc_live_... or svc_test_...)}"
: "${SVC_SIGNING_SECRET:?set SVC_SIGNING_SECRET (svc_sign_...)}"

method="$(printf '%s' "${1:-GET}" | tr '[:lower:]' '[:upper:]')"
path="${2:-/api/v1/auth/me}"
body="${3:-}"
ts="${SVC_TIMESTAMP:-$(date +%s)}"

signature="$(printf '%s.%s.%s.%s' "$ts" "$method" "$path" "$body" \
  | openssl dgst -sha256 -hmac "$SVC_SIGNING_SECRET" -hex \
  | awk '{print $NF}')"

args=(
  --silent --show-error --globoff
  --request "$method"
  --header "X-API-Key: ${SVC_API_KEY}"
  --header "X-Svc-Timestamp: ${ts}"
  --header "X-Svc-Signature: v1=${signature}"
  --write-out '\nHTTP %{http_code}\n'
)
if [ -n "$body" ]; then
  args+=(--header 'Content-Type: application/json' --data-binary "$body")
fi

curl "${args[@]}" "${SVC_BASE_URL%/}${path}"
