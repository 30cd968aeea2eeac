// The drift check's first question, asked of npm before anything is installed: is every package
// pinned in package.json still the one users install? For each it prints the pinned version,
// npm's latest, the date of the latest release and npm's `deprecated` (for the pinned version
// and for the latest), and it fails when either is deprecated: a deprecated package is one its
// users have been told to leave, so a suite that still passes against it proves nothing.
// A package with no release for STALE_DAYS is reported as possibly moved (a scope change such as
// @zed-industries/* -> @agentclientprotocol/* leaves the old name alive and undeprecated).
//
// The ACP adapters are also checked against the ACP registry (assets/acp/registry.json, herd's
// snapshot of agentclientprotocol/registry, renewed by `scripts/acp-registry refresh`): the npm
// package the registry names for each agent herd has a built-in profile for must be the one
// pinned, else the adapter has moved.
//
// Usage: node tests/conformance/drift.mjs
//   exit 1 on a deprecated pin or an adapter the registry distributes under another name,
//   2 when npm cannot say.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

const STALE_DAYS = 120;
const DAY_MS = 24 * 60 * 60 * 1000;

const manifest = JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8"));
const pins = Object.entries(manifest.dependencies ?? {});

/** `npm view <spec> --json`, parsed; a failure says which package npm could not tell about. */
function view(spec) {
  try {
    const text = execFileSync("npm", ["view", spec, "--json"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
    const value = JSON.parse(text);
    // A range can match several versions: npm then answers a list; the last is the newest.
    return Array.isArray(value) ? value[value.length - 1] : value;
  } catch (error) {
    console.error(`drift: npm view ${spec} failed: ${String(error.stderr ?? error).trim()}`);
    process.exit(2);
  }
}

let deprecated = 0;
let stale = 0;
for (const [name, pinned] of pins) {
  const latest = view(name);
  const atPin = view(`${name}@${pinned}`);
  const released = latest.time?.[latest.version];
  const days = released ? Math.floor((Date.now() - Date.parse(released)) / DAY_MS) : null;
  const when = released ? `${released.slice(0, 10)}, ${days} days ago` : "date unknown";
  console.log(`drift: ${name} pinned ${pinned}, latest ${latest.version} (${when})`);
  for (const [which, info] of [["pinned", atPin], ["latest", latest]]) {
    if (info.deprecated) {
      deprecated += 1;
      console.log(`drift: DEPRECATED ${name}@${info.version} (${which}): ${info.deprecated}`);
    }
  }
  if (days !== null && days > STALE_DAYS) {
    stale += 1;
    console.log(
      `drift: MOVED? ${name} has had no release for ${days} days: check whether its users ` +
        `install another package now (a new scope or name) and pin that one`,
    );
  }
}
// "@scope/name@1.2.3" -> "@scope/name"
const packageName = (spec) => spec.slice(0, spec.lastIndexOf("@") > 0 ? spec.lastIndexOf("@") : spec.length);
// The registry's agents herd has built-in profiles for: registry id -> herd profile.
const HERD_PROFILES = { "claude-acp": "claude-acp", "codex-acp": "codex-acp", gemini: "gemini-acp" };
const snapshot = JSON.parse(
  readFileSync(new URL("../../assets/acp/registry.json", import.meta.url), "utf8"),
);
const registry = {
  agents: snapshot.agents
    .filter((agent) => HERD_PROFILES[agent.id] && agent.distribution?.npx)
    .map((agent) => ({ ...agent, herd_profile: HERD_PROFILES[agent.id], npx: agent.distribution.npx.package })),
};
let moved = 0;
for (const agent of registry.agents) {
  const name = packageName(agent.npx);
  if (!pins.some(([pinned]) => pinned === name)) {
    moved += 1;
    const pinned = pins.map(([pinned]) => pinned).join(", ");
    console.log(
      `drift: MOVED ${agent.herd_profile}: the ACP registry's ${agent.id} is npm ${name}, ` +
        `which is not pinned (pins: ${pinned})`,
    );
  }
}
if (deprecated > 0 || moved > 0) {
  console.log(
    `drift: ${deprecated} deprecated pin(s), ${moved} moved adapter(s): ` +
      `move them in tests/conformance/package.json`,
  );
  process.exit(1);
}
console.log(
  `drift: ${pins.length} pinned packages, none deprecated; ${registry.agents.length} ACP ` +
    `registry agents, each pinned under the registry's name` +
    (stale > 0 ? `, ${stale} with no release for over ${STALE_DAYS} days (see above)` : ""),
);
