#!/usr/bin/env bash
# Prints the path of a launcher for Temporal's time-skipping test server (the workflow unit tests
# run on it), fetching it once when missing. Temporal publishes that server for the TypeScript SDK
# only as a download from its own site; the same server is on Maven Central as a Java program
# (io.temporal:temporal-test-server), which Maven fetches into .tools/temporal-test-server with
# its dependencies. Order: TEMPORAL_TEST_SERVER_PATH; a copy fetched earlier; a fetch with Maven.
# With --find (what tests pass) it only looks, and names the command that prepares it.
set -euo pipefail
find_only=false
if [ "${1:-}" = --find ]; then find_only=true; fi
VERSION=1.38.0
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$root/.tools/temporal-test-server"
launcher="$dir/temporal-test-server"

if [ -n "${TEMPORAL_TEST_SERVER_PATH:-}" ]; then
  if [ -x "$TEMPORAL_TEST_SERVER_PATH" ]; then echo "$TEMPORAL_TEST_SERVER_PATH"; exit 0; fi
  echo "TEMPORAL_TEST_SERVER_PATH=$TEMPORAL_TEST_SERVER_PATH is not an executable file" >&2
  exit 1
fi
if [ -x "$launcher" ] && [ -f "$dir/lib/temporal-test-server-$VERSION.jar" ]; then echo "$launcher"; exit 0; fi
if $find_only; then
  echo "Temporal's test server is not fetched yet: run \`npm run test:setup\` (npm test runs it first)." >&2
  exit 1
fi

for tool in java mvn; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "The workflow unit tests need Java 11+ and Maven to fetch Temporal's test server; install them (Debian: apt-get install default-jdk-headless maven) or set TEMPORAL_TEST_SERVER_PATH." >&2
    exit 1
  fi
done
echo "Fetching Temporal's test server $VERSION from Maven Central into .tools/temporal-test-server (one time)..." >&2
mkdir -p "$dir/lib"
cat > "$dir/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local</groupId><artifactId>temporal-test-server-fetch</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>io.temporal</groupId><artifactId>temporal-test-server</artifactId><version>$VERSION</version></dependency>
  </dependencies>
</project>
POM
mvn -q -f "$dir/pom.xml" dependency:copy-dependencies -DoutputDirectory="$dir/lib" >&2
cat > "$launcher" <<LAUNCH
#!/usr/bin/env bash
# Temporal's time-skipping test server: takes the port to listen on, as the SDK passes it.
exec java -XX:+UseSerialGC -Xss512k -cp "$dir/lib/*" io.temporal.testserver.TestServer "\$@"
LAUNCH
chmod +x "$launcher"
echo "Temporal test server ready: $launcher" >&2
echo "$launcher"
