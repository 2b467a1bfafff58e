#!/usr/bin/env bash
# Every tampered saved file of test/hostile-api.test.ts (each field, array and
# entry of every class's saved model, with each tamper that applies), not the
# seeded 150 of `npm test`: prints how many were refused at load, how many
# loaded, the later calls that threw a FedmixError, and every violation (a
# trap, a non-finite result). About a minute.
set -euo pipefail
cd "$(dirname "$0")/.."
FEDMIX_TAMPER_RUNS=all FEDMIX_TAMPER_REPORT=1 npx --no-install vitest run test/hostile-api.test.ts -t 'saved models'
