//! Command-line arguments: every command, option and its help text. Parsing only; the commands
//! themselves live in `run`, `ui`, `replay` and `sim`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use thiserror::Error;

#[derive(Debug, Parser)]
#[command(
    name = "herd",
    version,
    about = "Run a batch of coding-agent tasks, each in its own terminal, and watch them",
    long_about = "herd runs one agent CLI (Claude Code, Codex CLI, Gemini CLI, Aider, or any \
command) per task of a JSON tasks file, several at once, each in its own pseudo-terminal. It \
answers permission prompts per policy, classifies failures, retries what is worth retrying, \
writes every state change back into the tasks file and records every attempt under runs/.",
    after_help = "Start with: herd init (writes tasks.json for the agent CLIs found here), then \
herd validate --tasks tasks.json and herd run --tasks tasks.json.\nEvery command has --help."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: HerdCommand,
}

#[derive(Debug, Subcommand)]
pub enum HerdCommand {
    /// Write a starter tasks file for the agent CLIs found on PATH: two example tasks and an
    /// unattended preset in "defaults" (refuses to overwrite a file without --force)
    Init(InitArgs),
    /// Run the batch: the dashboard on a terminal, headless otherwise, or in the background
    /// with --detach
    Run(RunArgs),
    /// Open the dashboard of a background run (`herd run --detach`) in this terminal; Ctrl-\
    /// detaches and the batch runs on
    Attach(AttachArgs),
    /// Check a tasks file and the profiles it uses; print every problem as FILE:LINE:COL: message
    /// (reads the file, never writes it)
    Validate(TasksArgs),
    /// Show a table of the tasks: status, attempts, failure type, last log, and whether a herd
    /// runs the file now (its pid, how, and how to reach it). Reads the file, never writes it
    Status(StatusArgs),
    /// List the agent profiles in effect (built-in plus --profiles) and their rules
    Profiles(ProfilesArgs),
    /// Replay a recorded attempt (a .cast file, or a task's folder for its latest attempt)
    Replay(ReplayArgs),
    /// Explain one attempt: the timeline of what herd saw and decided (prompts and their rules,
    /// answers and the guard's reasons, the marker, the ending, the verdict and its evidence) and
    /// what the profile's rules make of the last screen
    Explain(ExplainArgs),
    /// What a task's agent changed in its folder: the files with their added and removed lines,
    /// and the unified diff, through the pager on a terminal
    Diff(DiffArgs),
    /// Send a message to a task's agent session (answers to its questions, or a follow-up):
    /// through the herd that runs the file, else for the next `herd run` to resume it with
    Message(MessageArgs),
    /// Talk to the herd that runs a tasks file through its control socket: `herd ctl --tasks FILE
    /// METHOD [PARAMS_JSON]` prints the result as JSON; `herd ctl --tasks FILE watch` prints its
    /// events as they come; `list` and `answer PROMPT_ID OPTION` are short for the usual calls
    Ctl(CtlArgs),
    /// Stop the herd that runs a tasks file, as a first Ctrl-C does: running agents are ended
    /// and their tasks go back to retryable
    Stop(StopArgs),
    /// Start the web view of the herd that runs a tasks file, or say where it runs: prints its
    /// sign-in address (it holds the token) and a QR code of it, for a phone
    Web(WebArgs),
    /// An MCP server over stdio for one tasks file: tools to list, add, change and run its
    /// tasks, wait for them, answer their prompts and explain their attempts
    Mcp(McpArgs),
    /// The built-in agent simulator that stands in for agent CLIs in tests and the demo
    Sim(crate::sim::SimArgs),
    /// Permission rules and the guard: `herd policy check` says what herd would do with a request
    Policy(PolicyArgs),
    /// Hosts agents run on through ssh or an exec launcher: `herd hosts check` probes each
    Hosts(super::hosts::HostsArgs),
    /// Agents of the ACP registry: `herd acp login <agent>` runs its terminal login once,
    /// `herd acp install <id>` installs a binary agent, its sha256 checked
    Acp(AcpArgs),
    /// herd's Agent Client Protocol client, which herd starts in an attempt's terminal for a
    /// `protocol = "acp"` profile: `herd acp-client -- <agent command>`
    #[command(name = "acp-client", hide = true)]
    AcpClient(AcpClientArgs),
    /// A hook of an agent CLI (Claude Code's `--settings` hooks, Gemini CLI's `BeforeTool`):
    /// reads the hook's input on stdin and prints the running herd's answer
    #[command(hide = true)]
    Hook,
    /// The session holder of a background run, started by `herd run --detach`: runs the
    /// dashboard in a pseudo-terminal of its own and serves it to `herd attach`
    #[command(hide = true)]
    Hold(HoldArgs),
    /// Codex's app server and TUI for an attempt whose command places `{app_server}`: starts
    /// `<program> app-server --listen <url>` in the attempt's process group, waits until it
    /// listens, then runs the TUI: `herd app-server-pair --listen unix://<socket> -- <TUI>`
    #[command(name = "app-server-pair", hide = true)]
    AppServerPair(AppServerPairArgs),
}

#[derive(Debug, Args, Clone)]
#[command(
    after_help = "Without --agent, the file is for every one of claude, codex and gemini found on \
PATH (the first is the default agent, the second runs the second example task), or for the \
built-in simulator (sim) when none is found. Then: herd validate --tasks FILE; herd run --tasks \
FILE."
)]
pub struct InitArgs {
    /// An agent profile the file is for (repeatable; the first is the default agent), e.g.
    /// claude, codex, gemini or sim
    #[arg(long = "agent", value_name = "PROFILE")]
    pub agents: Vec<String>,
    /// The tasks file to write
    #[arg(long, value_name = "FILE", default_value = "tasks.json")]
    pub tasks: PathBuf,
    /// Overwrite the file if it exists
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args, Clone)]
pub struct AppServerPairArgs {
    /// Where the server listens (`unix://<socket>`)
    #[arg(long)]
    pub listen: String,
    /// The TUI's command and arguments
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    pub command: Vec<String>,
}

#[derive(Debug, Args, Clone)]
#[command(
    after_help = "Keys: every key goes to the dashboard, which works as in `herd run`, except Ctrl-\\, which detaches this terminal. In the dashboard, q asks whether to detach or to stop the batch. Closing the terminal detaches too. Any number of terminals may be attached at once; the dashboard takes the size of the one typed in last.\n\nExit status: 0 detached or the batch ended; 1 no background herd runs the file, or it refused; 2 without --tasks, several background herds run (each is listed)."
)]
pub struct AttachArgs {
    /// The tasks file the background herd runs [default: the only background herd of yours]
    #[arg(long, value_name = "FILE")]
    pub tasks: Option<PathBuf>,
    /// The attach socket itself, instead of the one of --tasks
    #[arg(long, value_name = "PATH", hide = true)]
    pub socket: Option<PathBuf>,
    /// Show "since you left" first even after a short absence (by default only after 10 minutes
    /// away with something new)
    #[arg(long, conflicts_with = "no_digest")]
    pub digest: bool,
    /// Open the dashboard at once, without "since you left"
    #[arg(long)]
    pub no_digest: bool,
}

#[derive(Debug, Args, Clone)]
pub struct HoldArgs {
    /// The tasks file (for its rendezvous)
    #[arg(long, value_name = "FILE")]
    pub tasks: PathBuf,
    /// The dashboard's first size, until a client attaches
    #[arg(long, value_name = "COLSxROWS", value_parser = parse_size)]
    pub size: (u16, u16),
    /// herd's arguments for the dashboard (`run --tasks FILE ...`)
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<std::ffi::OsString>,
}

#[derive(Debug, Args, Clone)]
pub struct AcpArgs {
    #[command(subcommand)]
    pub command: AcpCommand,
}

#[derive(Debug, Subcommand, Clone)]
pub enum AcpCommand {
    /// Run the agent's terminal login (its ACP `terminal` auth method) in this terminal, once
    Login(AcpLoginArgs),
    /// Download a binary agent of the registry for this platform into herd's data folder,
    /// check its sha256 and unpack it; `acp:<id>` runs it from then on (`herd run` never
    /// downloads)
    Install(AcpInstallArgs),
}

#[derive(Debug, Args, Clone)]
pub struct AcpLoginArgs {
    /// The agent: a registry id (`qwen-code`) or an ACP profile's name (`acp:qwen-code`,
    /// `gemini-acp`, one of --profiles)
    pub agent: String,
    /// Extra or overriding agent profiles (TOML), on top of the built-in ones
    #[arg(long, value_name = "FILE")]
    pub profiles: Option<PathBuf>,
}

#[derive(Debug, Args, Clone)]
pub struct AcpInstallArgs {
    /// The agent's id in the ACP registry (`herd profiles` lists them as `acp:<id>`)
    pub id: String,
    /// The archive's expected SHA-256 (hex), when the registry gives none; must match the
    /// registry's when it does
    #[arg(long, value_name = "HEX")]
    pub sha256: Option<String>,
}

#[derive(Debug, Args, Clone)]
pub struct AcpClientArgs {
    /// The agent's command and arguments
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    pub command: Vec<String>,
}

#[derive(Debug, Args, Clone)]
pub struct PolicyArgs {
    #[command(subcommand)]
    pub command: PolicyCommand,
}

#[derive(Debug, Subcommand, Clone)]
pub enum PolicyCommand {
    /// Decide one request as a task's policy would: allow, ask or refuse, and why
    Check(PolicyCheckArgs),
}

#[derive(Debug, Args, Clone)]
#[command(after_long_help = POLICY_HELP)]
pub struct PolicyCheckArgs {
    /// Take the rules and switches of a task of this tasks file (with --task)
    #[arg(long, value_name = "FILE", requires = "task")]
    pub tasks: Option<PathBuf>,
    /// The task whose policy decides (with --tasks)
    #[arg(long, value_name = "TASK_ID", requires = "tasks")]
    pub task: Option<String>,
    /// Extra or overriding agent profiles (TOML), for the profile's own rules
    #[arg(long, value_name = "FILE")]
    pub profiles: Option<PathBuf>,
    /// An allow rule, e.g. 'Bash(npm test:*)' (repeatable)
    #[arg(long, value_name = "RULE")]
    pub allow: Vec<String>,
    /// An ask rule (repeatable)
    #[arg(long, value_name = "RULE")]
    pub ask: Vec<String>,
    /// A deny rule (repeatable)
    #[arg(long, value_name = "RULE")]
    pub deny: Vec<String>,
    /// As with "auto_press_1": true, allow what the guard and the rules do not stop
    #[arg(long)]
    pub auto: bool,
    /// The task's folder that paths are judged against [default: the task's cwd, else here]
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// A shell command line to judge (instead of REQUEST)
    #[arg(long, value_name = "COMMAND", conflicts_with = "request")]
    pub shell: Option<String>,
    /// The request, as rules write it: 'Bash(rm -rf build)', 'Edit(src/main.rs)',
    /// 'Write(/etc/hosts)', 'Read(~/.ssh/id_rsa)', 'WebFetch(https://example.com)'; anything
    /// not written as a tool is a shell command ('rm -rf ~' is 'Bash(rm -rf ~)')
    #[arg(required_unless_present = "shell")]
    pub request: Option<String>,
}

const POLICY_HELP: &str = "\
How herd decides a permission request (what a dialog asks: a command, an edit, a fetch, a tool):
  1. The guard's floor refuses dangerous requests whatever the policy says: recursive or forced
     deletes outside the task folder (or of it, ~ or /), find -delete / -exec rm outside it,
     downloads run by a shell or interpreter (curl | sh, bash <(curl ...), sh -c \"$(curl ...)\"),
     force pushes and remote deletes, sudo / su / doas, raw disk and file-system tools (dd of=/dev/...,
     mkfs, fdisk, wipefs), recursive chmod / chown outside the folder, credential stores and keys
     (~/.ssh, ~/.aws, ~/.config/gcloud, .netrc, keychains, *.pem, id_rsa) or sending them out,
     fork bombs, shutdown / reboot, file edits outside the task folder.
  2. Rules: deny > ask > allow (first match in each list). A compound command (&&, ||, ;, |,
     $(...), bash -c '...') is split and each simple command is matched; every one must be allowed.
  3. What herd cannot parse is asked, never allowed.
  4. The switch (auto_press_1, or --auto here) allows what is left; otherwise herd asks.
A refused or asked prompt waits for the operator in the dashboard (who may approve it by hand);
headless, the attempt ends failed_permission_blocked after permission_wait_sec.

Rules (in permission_policy.allow / ask / deny, or a profile's allow / ask / deny):
  Bash                      any command
  Bash(npm test)            exactly that command
  Bash(npm test:*)          that prefix, then anything
  Bash(git * main)          * is any text
  Edit(src/**)              edits and writes under src/ of the task folder (** crosses folders)
  Write(docs/*.md)          writes only; * stays within a folder
  Read(~/.cache/**)         ~/ is the home folder, //path an absolute path
  WebFetch(domain:example.com)   that host and its subdomains
  mcp__github__create_issue a tool by name, optionally Tool(glob on its input)

Exit status: 0 allow, 1 ask (the operator decides), 3 refuse (never answered automatically),
2 the request, a rule or the tasks file is invalid.

Examples:
  herd policy check --auto 'Bash(rm -rf build)'
  herd policy check --auto 'rm -rf ~'            (a shell command: refused, exit 3)
  herd policy check --allow 'Bash(npm test:*)' --shell 'npm test && git push --force'
  herd policy check --tasks tasks.json --task fix-042 'Edit(../other/main.rs)'";

/// Options shared by the commands that read a tasks file.
#[derive(Debug, Args, Clone)]
pub struct TasksArgs {
    /// The tasks file (JSON)
    #[arg(long, value_name = "FILE")]
    pub tasks: PathBuf,
    /// Extra or overriding agent profiles (TOML), on top of the built-in ones
    #[arg(long, value_name = "FILE")]
    pub profiles: Option<PathBuf>,
    /// Hosts a task's "host" may name (TOML: [hosts.NAME] with ssh = "user@host" or
    /// exec = [...]) [default: the [hosts] table of --profiles]
    #[arg(long, value_name = "FILE")]
    pub hosts: Option<PathBuf>,
}

#[derive(Debug, Args, Clone)]
#[command(
    after_help = "The tasks file is the batch's state: herd rewrites it after every state change \
(only the fields that changed), so a run that stops for any reason resumes where it was with the \
same command. Completed tasks never run again. One herd at a time runs a file (a second exits \
2; the lock is FILE.lock beside it, removed when the run ends), and a file herd cannot write \
back (read-only, or in a folder where it cannot be replaced) is refused before anything \
starts.\n\nRunning failed tasks again: `herd run \
--tasks FILE --retry failed` runs every failed task again (and whatever else is pending), each \
with a fresh retry budget; `--retry ID` names tasks; `--only ID --retry ID` runs just that one. \
Attempt numbers go on (the earlier recordings are kept); the task's \"attempts_before_retry\" \
field says where the new budget starts.\n\nRecordings under runs/ are private (folders 0700, \
files 0600). Keys typed in take-over mode are recorded as a count and a time, not their text, \
unless --record-input is given.\n\nExit status: 0 every enabled task completed; \
1 some task ended otherwise; 2 the tasks file, a profile or an argument is invalid (nothing was \
started or written); 3 herd could not write the tasks file or its recordings; 130 stopped by the \
operator (running tasks go back to retryable)."
)]
pub struct RunArgs {
    #[command(flatten)]
    pub tasks: TasksArgs,
    /// Where attempts are recorded [default: runs/ beside the tasks file]
    #[arg(long, value_name = "DIR")]
    pub runs_dir: Option<PathBuf>,
    /// How many agents run at once
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub concurrency: u16,
    /// Run only this task (repeat for several); the others are left as they are. A task named
    /// here that will not run (completed, disabled, failed out of retries, cancelled) is said
    /// so at the start, with what to do
    #[arg(long = "only", value_name = "TASK_ID")]
    pub only: Vec<String>,
    /// Run these tasks again: `failed` (every enabled failed task of this run) or task ids (failed,
    /// cancelled or retryable ones), repeatable or comma-separated. Each goes back to pending
    /// with a fresh retry budget (max_retries counts again from here); recorded in the tasks
    /// file and runs/herd.log
    #[arg(long = "retry", value_name = "failed|TASK_ID", value_delimiter = ',', num_args = 1..)]
    pub retry: Vec<String>,
    /// Record the keys typed in take-over mode (`i` in the dashboard) in the attempt's .cast.
    /// Off by default: they may be a password typed at a prompt that does not echo, so only
    /// how many keys were typed, and when, is recorded
    #[arg(long)]
    pub record_input: bool,
    /// No dashboard: one line per event on stdout, a summary table at the end
    #[arg(long)]
    pub headless: bool,
    /// Run the batch in the background with its dashboard, and return: `herd attach` opens
    /// the dashboard, `herd status` says whether it runs. Its output goes to
    /// runs/background.log
    #[arg(long, conflicts_with = "headless")]
    pub detach: bool,
    /// Leave the mouse to the terminal (its own text selection) instead of the dashboard's
    /// clicks and wheel; with the mouse on, most terminals select text with Shift held
    #[arg(long)]
    pub no_mouse: bool,
    /// Terminal size given to each agent's pseudo-terminal, as COLSxROWS
    #[arg(long, value_name = "COLSxROWS", default_value = "120x40", value_parser = parse_size)]
    pub pty_size: (u16, u16),
    /// Run this shell command (by `sh -c`) with one JSON event on its stdin when a prompt
    /// waits, a task needs input or fails for good, and when the batch ends; overrides the
    /// tasks file's and the profiles' `notify`
    #[arg(long, value_name = "CMD")]
    pub notify: Option<String>,
    /// Serve the web view (the queue, waiting prompts with their answers, live panes, the
    /// digest) on ADDR, 127.0.0.1:8917 by default; its sign-in address is printed once, with a
    /// QR code (with --detach, by the command that detaches). Another address than
    /// 127.0.0.1 is reachable from the network: prefer an ssh tunnel or Tailscale (README,
    /// "Approve from your phone")
    #[arg(long, value_name = "ADDR", num_args = 0..=1, require_equals = false)]
    pub web: Option<Option<String>>,
}

#[derive(Debug, Args, Clone)]
#[command(
    after_help = "Speaks the Model Context Protocol on stdin/stdout, for an agent CLI to use as a \
tool server. Tools: list_tasks, get_task, update_task, add_task, run_agent, answer_prompt, \
wait_for, explain. While a herd runs the file, the tools go through it; otherwise they read and \
write the file (holding its lock) and run_agent starts `herd run --detach --only ID` (see it \
with `herd attach`). Register it, e.g.: claude mcp add herd -- herd mcp \
--tasks /abs/path/tasks.json"
)]
pub struct McpArgs {
    #[command(flatten)]
    pub tasks: TasksArgs,
    /// Where attempts are recorded [default: runs/ beside the tasks file]
    #[arg(long, value_name = "DIR")]
    pub runs_dir: Option<PathBuf>,
}

#[derive(Debug, Args, Clone)]
pub struct StatusArgs {
    #[command(flatten)]
    pub tasks: TasksArgs,
    /// Print the table as JSON (one object per task)
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args, Clone)]
pub struct ProfilesArgs {
    /// Extra or overriding agent profiles (TOML), on top of the built-in ones
    #[arg(long, value_name = "FILE")]
    pub profiles: Option<PathBuf>,
    /// Show only this profile, with every rule in full
    pub name: Option<String>,
}

#[derive(Debug, Args, Clone)]
#[command(
    after_help = "When a herd runs the tasks file (in a terminal, headless or in the \
background), the message goes through its control socket: typed into the task's agent when it \
runs, else the session of a task that needs input or has ended is resumed with it at once. \
Otherwise the task becomes `retryable` with the message in its \"resume_message\" \
field, and the next `herd run` continues the agent's last session (the profile's `resume` command \
with the session id from the task's result); when there is no session to continue, a fresh \
attempt gets the message (and the agent's questions) in its prompt. In the dashboard, `m` on a \
task that is not running does the same.\n\nExample: herd message --tasks tasks.json fix-042 \
\"Use Postgres; yes, drop the old table\""
)]
pub struct MessageArgs {
    /// The tasks file (JSON)
    #[arg(long, value_name = "FILE")]
    pub tasks: PathBuf,
    /// Extra or overriding agent profiles (TOML), to tell whether the agent can resume
    #[arg(long, value_name = "FILE")]
    pub profiles: Option<PathBuf>,
    /// The task to send the message to
    pub task_id: String,
    /// The message; `-` reads it from standard input
    pub text: String,
    /// Send it to a completed task too: the task runs again (its session continues with it)
    #[arg(long)]
    pub reopen: bool,
}

#[derive(Debug, Args, Clone)]
#[command(
    after_help = "The web view shows the queue, the prompts waiting with their answers as buttons, a live view of any pane and the digest; what it answers is recorded as \"by\": \"web\". It listens on 127.0.0.1 unless ADDR says otherwise (then it warns: prefer an ssh tunnel or Tailscale). While it runs, the notify events of waiting prompts carry one-time links, one per answer. `herd run --web` starts it with the run."
)]
pub struct WebArgs {
    /// The tasks file the running herd runs (JSON)
    #[arg(long, value_name = "FILE")]
    pub tasks: PathBuf,
    /// Where to listen (IP:PORT, or a port on 127.0.0.1); 127.0.0.1:8917 by default
    #[arg(value_name = "ADDR")]
    pub addr: Option<String>,
}

#[derive(Debug, Args, Clone)]
pub struct StopArgs {
    /// The tasks file the running herd runs (JSON)
    #[arg(long, value_name = "FILE")]
    pub tasks: PathBuf,
}

#[derive(Debug, Args, Clone)]
#[command(after_help = ctl_help())]
pub struct CtlArgs {
    /// The tasks file the running herd runs (JSON)
    #[arg(long, value_name = "FILE", required_unless_present = "socket")]
    pub tasks: Option<PathBuf>,
    /// Connect to this control socket instead of the one of --tasks
    #[arg(long, value_name = "PATH", conflicts_with = "tasks")]
    pub socket: Option<PathBuf>,
    /// A method (below); `watch`: subscribe and print each event as a JSON line; `list`: the
    /// tasks; `answer PROMPT_ID OPTION`: answer a waiting prompt
    pub method: String,
    /// The method's parameters as a JSON object (default {}); for `answer`, the prompt's id
    pub params: Option<String>,
    /// For `answer`: the option to answer with (approve, approve_always or deny)
    pub option: Option<String>,
    /// Seconds to wait for the herd's answer before giving up (exit 3); 0 waits for ever.
    /// `watch` waits for events as long as the run lasts
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    pub timeout: f64,
}

/// `herd ctl --help`'s list of methods.
fn ctl_help() -> String {
    let mut text = String::from("Methods (params -> result):\n");
    for (name, params, result) in crate::serve::control::protocol::METHODS {
        text.push_str(&format!("  {name:<18} {params} -> {result}\n"));
    }
    text.push_str(
        "  watch              events.subscribe, then one JSON line per event until the run ends\n\n\
         Short verbs, a table or a line on a terminal and JSON into a pipe:\n  \
         list                       tasks.list: each task's status, attempts and live state \
         (with the id of a prompt waiting for you)\n  \
         answer PROMPT_ID OPTION    prompts.answer: OPTION is approve, approve_always or deny\n  \
         (and `herd stop --tasks FILE`: batch.stop)\n\n\
         Exit codes: 0 the result was printed; 1 the herd answered with an error (printed as \
         JSON on stderr); 2 bad arguments; 3 no herd runs the file or it cannot be reached.\n\n\
         Examples:\n  herd ctl --tasks tasks.json tasks.list '{\"status\": [\"failed\"]}'\n  \
         herd ctl --tasks tasks.json prompts.answer '{\"prompt_id\": \"fix-1/1/1\", \
         \"answer\": \"approve\"}'\n  herd ctl --tasks tasks.json list\n  \
         herd ctl --tasks tasks.json answer fix-1/1/1 approve\n  herd ctl --tasks tasks.json watch",
    );
    text
}

#[derive(Debug, Args, Clone)]
#[command(
    after_help = "Run it when a CLI update breaks something: the rules that no longer match the \
last screen show up as \"no match\". Reads runs/<task_id>/attempt_<n>.cast and the facts file \
attempt_<n>.json beside it.\n\nExample: herd explain runs/fix-042"
)]
pub struct ExplainArgs {
    /// A recording (runs/<task_id>/attempt_<n>.cast) or a task's folder (its latest attempt)
    pub path: PathBuf,
    /// Extra or overriding agent profiles (TOML), as the run had them
    #[arg(long, value_name = "FILE")]
    pub profiles: Option<PathBuf>,
    /// Apply this profile's rules instead of the one the attempt ran with
    #[arg(long, value_name = "PROFILE")]
    pub agent: Option<String>,
}

#[derive(Debug, Args, Clone)]
#[command(
    after_help = "Shows what the attempt changed in the task's folder (its worktree for a \
\"worktree\": true task): from the snapshot herd took as it started \
(runs/<task_id>/attempt_<n>.index) to the one it took as it ended (attempt_<n>.end.index), or to \
the folder as it is now while it runs; without a start snapshot, from the folder's HEAD. The \
tasks file and runs/ are never counted. On a terminal the diff goes through $PAGER (else \
less -R), coloured by the files' languages; into a pipe it is plain.\n\n\
Example: herd diff --tasks tasks.json fix-042 --stat"
)]
pub struct DiffArgs {
    /// The tasks file (JSON)
    #[arg(long, value_name = "FILE")]
    pub tasks: PathBuf,
    /// Where attempts are recorded [default: runs/ beside the tasks file]
    #[arg(long, value_name = "DIR")]
    pub runs_dir: Option<PathBuf>,
    /// The task whose changes to show
    pub task_id: String,
    /// Only the changed files with their line counts
    #[arg(long)]
    pub stat: bool,
    /// The changes of this attempt [default: the latest]
    #[arg(long, value_name = "N")]
    pub attempt: Option<u32>,
}

#[derive(Debug, Args, Clone)]
pub struct ReplayArgs {
    /// A recording (runs/<task_id>/attempt_<n>.cast) or a task's folder (its latest attempt)
    pub path: PathBuf,
    /// Print the screen as text instead of opening the player
    #[arg(long)]
    pub print: bool,
    /// The screen at this many seconds into the recording: printed with --print [default: the
    /// end], or where the player opens (paused) [default: the start, playing]
    #[arg(long, value_name = "SECONDS", value_parser = non_negative_seconds)]
    pub at: Option<f64>,
    /// Playback speed: 0.25, 0.5, 1, 2, 4, 8 or 16 (the nearest is taken)
    #[arg(long, value_name = "X", value_parser = speed_factor, conflicts_with = "print")]
    pub speed: Option<f64>,
    /// Cap pauses longer than this at this many seconds, like `asciinema play -i` [default: the
    /// recording's idle_time_limit, else off; `i` in the player switches it]
    #[arg(long, value_name = "SECONDS", value_parser = non_negative_seconds, conflicts_with = "print")]
    pub idle_limit: Option<f64>,
}

/// A value clap could not take, with the text as given (clap names the option).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
enum ValueError {
    #[error("expected a speed such as 0.5, 1 or 4, got {0:?}")]
    Speed(String),
    #[error("expected a number of seconds (0 or more), got {0:?}")]
    Seconds(String),
    #[error("expected COLSxROWS such as 120x40, got {0:?}")]
    SizeShape(String),
    #[error("bad column count in {0:?}")]
    SizeColumns(String),
    #[error("bad row count in {0:?}")]
    SizeRows(String),
    #[error("size {0:?} is out of range (20..1000 x 5..500)")]
    SizeRange(String),
}

/// A playback speed: a finite number above zero.
fn speed_factor(text: &str) -> Result<f64, ValueError> {
    match text.trim().parse::<f64>() {
        Ok(n) if n.is_finite() && n > 0.0 => Ok(n),
        _ => Err(ValueError::Speed(text.to_string())),
    }
}

/// A finite number of seconds, zero or more.
fn non_negative_seconds(text: &str) -> Result<f64, ValueError> {
    match text.trim().parse::<f64>() {
        Ok(n) if n.is_finite() && n >= 0.0 => Ok(n),
        _ => Err(ValueError::Seconds(text.to_string())),
    }
}

/// Parses `120x40` into (cols, rows).
fn parse_size(text: &str) -> Result<(u16, u16), ValueError> {
    let owned = || text.to_string();
    let (cols, rows) = text
        .split_once(['x', 'X'])
        .ok_or_else(|| ValueError::SizeShape(owned()))?;
    let cols: u16 = cols
        .trim()
        .parse()
        .map_err(|_| ValueError::SizeColumns(owned()))?;
    let rows: u16 = rows
        .trim()
        .parse()
        .map_err(|_| ValueError::SizeRows(owned()))?;
    if !(20..=1000).contains(&cols) || !(5..=500).contains(&rows) {
        return Err(ValueError::SizeRange(owned()));
    }
    Ok((cols, rows))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("120x40"), Ok((120, 40)));
        assert!(parse_size("120").is_err());
        assert!(parse_size("1x1").is_err());
    }
}
