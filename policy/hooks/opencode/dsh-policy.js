// dsh-policy guard for OpenCode: written by `dsh-policy init opencode`, do not edit by hand.
//
// OpenCode has no command hooks; it loads this plugin, whose tool.execute.before/after hooks run
// `dsh-policy hook opencode` once per event with a PreToolUse/PostToolUse payload on stdin and
// read its answer: exit 2 = refused (stderr is the reason); exit 0 = stdout is nothing or one
// JSON object. Everything else fails closed: a hook that cannot start, exits with any other code,
// runs past the deadline or prints what does not parse refuses the call (before) or replaces its
// output with the failure (after). A thrown error is how an OpenCode plugin refuses a tool call.
import { spawn } from "node:child_process";

const COMMAND = __DSH_POLICY_COMMAND__; // argv, filled in by `dsh-policy init opencode`
const TIMEOUT_MS = __DSH_POLICY_TIMEOUT_MS__;
const FAILED = "dsh-policy failed closed";

function runHook(payload, cwd) {
  return new Promise((resolve) => {
    let done = false;
    const finish = (answer) => { if (!done) { done = true; resolve(answer); } };
    let child;
    try {
      child = spawn(COMMAND[0], COMMAND.slice(1), { cwd, stdio: ["pipe", "pipe", "pipe"] });
    } catch (error) {
      finish({ failed: `${FAILED}: cannot start ${COMMAND[0]}: ${error}` });
      return;
    }
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      finish({ failed: `${FAILED}: no answer within ${TIMEOUT_MS} ms` });
    }, TIMEOUT_MS);
    child.stdout.on("data", (d) => { stdout += d; });
    child.stderr.on("data", (d) => { stderr += d; });
    child.on("error", (error) => { clearTimeout(timer); finish({ failed: `${FAILED}: ${error}` }); });
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code === 2) { finish({ refused: stderr.trim() || FAILED }); return; }
      if (code !== 0) { finish({ failed: `${FAILED}: hook exited ${code}: ${stderr.trim()}` }); return; }
      if (!stdout.trim()) { finish({ answer: {} }); return; }
      try {
        const answer = JSON.parse(stdout);
        if (answer === null || typeof answer !== "object" || Array.isArray(answer)) throw new Error("not an object");
        finish({ answer });
      } catch (error) {
        finish({ failed: `${FAILED}: unreadable answer: ${error}` });
      }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

function payloadOf(event, input, args, directory, response) {
  const payload = {
    session_id: String(input.sessionID || "opencode"),
    hook_event_name: event,
    cwd: directory,
    tool_name: String(input.tool),
    tool_input: args && typeof args === "object" ? args : {},
    tool_use_id: input.callID ? String(input.callID) : undefined,
  };
  if (event === "PostToolUse") payload.tool_response = response;
  return payload;
}

function replaceOutput(output, text) {
  if (typeof output.output === "string" || !Array.isArray(output.content)) output.output = text;
  if (Array.isArray(output.content)) output.content = [{ type: "text", text }];
}

export const DshPolicy = async ({ directory }) => ({
  "tool.execute.before": async (input, output) => {
    const result = await runHook(payloadOf("PreToolUse", input, output.args, directory), directory);
    if (result.refused) throw new Error(result.refused);
    if (result.failed) throw new Error(result.failed);
    const answer = result.answer;
    if (answer.continue === false) throw new Error(answer.stopReason || FAILED);
    const specific = answer.hookSpecificOutput || {};
    if (specific.permissionDecision === "deny" || answer.decision === "block") {
      throw new Error(specific.permissionDecisionReason || answer.reason || "denied by policy");
    }
    if (specific.updatedInput && typeof specific.updatedInput === "object") {
      for (const key of Object.keys(output.args)) delete output.args[key];
      Object.assign(output.args, specific.updatedInput);
    }
  },
  "tool.execute.after": async (input, output) => {
    const response = typeof output.output === "string" ? output.output : { content: output.content, output: output.output };
    const result = await runHook(payloadOf("PostToolUse", input, input.args, directory, response), directory);
    if (result.refused || result.failed) { replaceOutput(output, result.refused || result.failed); return; }
    const answer = result.answer;
    const specific = answer.hookSpecificOutput || {};
    if (answer.continue === false) { replaceOutput(output, answer.stopReason || FAILED); return; }
    if (answer.decision === "block") { replaceOutput(output, answer.reason || "tool output withheld by policy"); return; }
    if (typeof specific.updatedToolOutput === "string") replaceOutput(output, specific.updatedToolOutput);
    if (typeof specific.additionalContext === "string" && typeof output.output === "string") {
      output.output += `\n\n${specific.additionalContext}`;
    }
  },
});
