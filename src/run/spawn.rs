//! Starting an agent in its pseudo-terminal with `posix_spawn`, and waiting for it. Not `fork`:
//! herd's address space grows with the batch, and fork's page-table copy made each of 10,000
//! starts slower than the last; `posix_spawn` copies nothing. The child gets a new session, the
//! terminal as stdio and controlling terminal, default signals, no other descriptor and the
//! task's folder. The only module allowed `unsafe`, each call with its reason.
#![allow(unsafe_code)]

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::process::{Pid, WaitOptions, waitpid};

use crate::core::classify::ExitStatus;

unsafe extern "C" {
    // glibc 2.29+; not bound by the libc crate for Linux.
    fn posix_spawn_file_actions_addchdir_np(
        actions: *mut libc::posix_spawn_file_actions_t,
        path: *const libc::c_char,
    ) -> libc::c_int;
}

/// What to start: `program` (a path, already resolved), its argv, folder and whole environment.
#[derive(Debug)]
pub struct SpawnRequest<'a> {
    pub program: &'a Path,
    pub argv: &'a [String],
    pub cwd: &'a Path,
    pub env: Vec<(OsString, OsString)>,
    /// The terminal's slave side (`/dev/pts/N`), opened by the child.
    pub terminal: &'a Path,
}

/// Set by the background holder for its dashboard (`q` asks "detach or stop?"); agents never
/// inherit it.
pub const BACKGROUND_FLAG: &str = "HERD_BACKGROUND";

/// herd's environment (less `HERD_BACKGROUND`) with `overrides` on top, and a `SHELL` when
/// neither has one.
pub fn agent_environment<'a>(
    overrides: impl IntoIterator<Item = (&'a String, &'a String)>,
) -> Vec<(OsString, OsString)> {
    let mut env: std::collections::BTreeMap<OsString, OsString> = std::env::vars_os().collect();
    // herd's own flag: a herd an agent runs must not take it.
    env.remove(OsStr::new(BACKGROUND_FLAG));
    for (key, value) in overrides {
        env.insert(key.into(), value.into());
    }
    env.entry("SHELL".into())
        .or_insert_with(|| "/bin/sh".into());
    env.into_iter().collect()
}

fn c_string(text: &OsStr, what: &str) -> io::Result<CString> {
    CString::new(text.as_bytes()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("the {what} contains a NUL byte"),
        )
    })
}

/// Turns a libc return code (0 or an errno) into a result.
fn check(code: libc::c_int) -> io::Result<()> {
    if code == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(code))
    }
}

/// The spawn attributes and file actions, destroyed when dropped.
struct SpawnSetup {
    attr: libc::posix_spawnattr_t,
    actions: libc::posix_spawn_file_actions_t,
}

impl SpawnSetup {
    fn new(terminal: &CString, cwd: &CString) -> io::Result<Box<SpawnSetup>> {
        // SAFETY: both structs are plain C data that the init calls below fill in before any
        // other use; zeroed memory is a valid (if meaningless) bit pattern for them. Boxed so
        // their addresses stay put (glibc keeps pointers into the file-actions array).
        let mut setup: Box<SpawnSetup> = Box::new(unsafe { std::mem::zeroed() });
        // SAFETY: `setup.attr` / `setup.actions` are valid for writes and not yet initialised.
        check(unsafe { libc::posix_spawnattr_init(&mut setup.attr) })?;
        // SAFETY: as above. If this fails `Drop` would destroy an uninitialised actions struct,
        // so the attr is destroyed here and the box forgotten.
        if let Err(error) =
            check(unsafe { libc::posix_spawn_file_actions_init(&mut setup.actions) })
        {
            // SAFETY: `attr` was initialised just above.
            unsafe { libc::posix_spawnattr_destroy(&mut setup.attr) };
            std::mem::forget(setup);
            return Err(error);
        }
        setup.configure(terminal, cwd)?;
        Ok(setup)
    }

    fn configure(&mut self, terminal: &CString, cwd: &CString) -> io::Result<()> {
        // SAFETY (every call in this function): `self.attr` and `self.actions` were initialised
        // by `new`; the sigset_t values are initialised by sigemptyset/sigfillset before use;
        // the C strings outlive the calls (glibc copies the paths into the actions).
        unsafe {
            let mut nothing: libc::sigset_t = std::mem::zeroed();
            check(libc::sigemptyset(&mut nothing))?;
            check(libc::posix_spawnattr_setsigmask(&mut self.attr, &nothing))?;
            let mut every: libc::sigset_t = std::mem::zeroed();
            check(libc::sigfillset(&mut every))?;
            check(libc::posix_spawnattr_setsigdefault(&mut self.attr, &every))?;
            let flags = libc::POSIX_SPAWN_SETSID
                | libc::POSIX_SPAWN_SETSIGMASK as libc::c_short
                | libc::POSIX_SPAWN_SETSIGDEF as libc::c_short;
            check(libc::posix_spawnattr_setflags(&mut self.attr, flags))?;

            // After setsid the child has no controlling terminal; opening the terminal (without
            // O_NOCTTY) as a session leader makes it the controlling one.
            check(libc::posix_spawn_file_actions_addopen(
                &mut self.actions,
                0,
                terminal.as_ptr(),
                libc::O_RDWR,
                0,
            ))?;
            check(libc::posix_spawn_file_actions_adddup2(
                &mut self.actions,
                0,
                1,
            ))?;
            check(libc::posix_spawn_file_actions_adddup2(
                &mut self.actions,
                0,
                2,
            ))?;
            check(posix_spawn_file_actions_addchdir_np(
                &mut self.actions,
                cwd.as_ptr(),
            ))?;
            check(libc::posix_spawn_file_actions_addclosefrom_np(
                &mut self.actions,
                3,
            ))?;
        }
        Ok(())
    }
}

impl Drop for SpawnSetup {
    fn drop(&mut self) {
        // SAFETY: both were initialised in `new` (a failed init never reaches a `SpawnSetup`
        // that is dropped) and are destroyed once.
        unsafe {
            libc::posix_spawn_file_actions_destroy(&mut self.actions);
            libc::posix_spawnattr_destroy(&mut self.attr);
        }
    }
}

/// Starts `request` in its terminal; returns the child's pid (also its group and session). Errors
/// are the OS's, so a shortage is told from a broken command by its errno.
pub fn spawn_in_terminal(request: &SpawnRequest<'_>) -> io::Result<u32> {
    let program = c_string(request.program.as_os_str(), "program path")?;
    let terminal = c_string(request.terminal.as_os_str(), "terminal path")?;
    let cwd = c_string(request.cwd.as_os_str(), "folder")?;
    let args = request
        .argv
        .iter()
        .map(|arg| c_string(OsStr::new(arg), "command"))
        .collect::<io::Result<Vec<_>>>()?;
    let env = request
        .env
        .iter()
        .map(|(key, value)| {
            let mut entry = key.clone();
            entry.push("=");
            entry.push(value);
            c_string(&entry, "environment")
        })
        .collect::<io::Result<Vec<_>>>()?;
    let mut arg_ptrs: Vec<*mut libc::c_char> = args.iter().map(|a| a.as_ptr().cast_mut()).collect();
    arg_ptrs.push(std::ptr::null_mut());
    let mut env_ptrs: Vec<*mut libc::c_char> = env.iter().map(|e| e.as_ptr().cast_mut()).collect();
    env_ptrs.push(std::ptr::null_mut());

    let setup = SpawnSetup::new(&terminal, &cwd)?;
    let mut pid: libc::pid_t = 0;
    // SAFETY: every pointer is valid for the call: `program` and the argv/env strings live until
    // the end of this function, both arrays end with a null pointer, and `setup` holds
    // initialised attributes and actions. posix_spawn does not keep any of them.
    check(unsafe {
        libc::posix_spawn(
            &mut pid,
            program.as_ptr(),
            &setup.actions,
            &setup.attr,
            arg_ptrs.as_ptr(),
            env_ptrs.as_ptr(),
        )
    })?;
    u32::try_from(pid).map_err(|_| io::Error::other(format!("posix_spawn returned pid {pid}")))
}

/// Waits for child `pid` to end (blocking: call it on a thread of its own).
pub fn wait_for_exit(pid: u32) -> ExitStatus {
    let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
        return ExitStatus::default();
    };
    loop {
        match waitpid(Some(pid), WaitOptions::empty()) {
            Ok(Some((_, status))) => {
                if let Some(signal) = status.terminating_signal() {
                    return ExitStatus {
                        code: None,
                        signal: Some(signal_name(signal)),
                    };
                }
                if let Some(code) = status.exit_status() {
                    return ExitStatus {
                        code: Some(code),
                        signal: None,
                    };
                }
                // Stopped or continued: not an end; wait again.
            }
            Err(rustix::io::Errno::INTR) => {}
            Ok(None) | Err(_) => return ExitStatus::default(),
        }
    }
}

/// The name the C library gives a signal (`strsignal`), as portable-pty reported it.
fn signal_name(signal: i32) -> String {
    let name = match signal {
        libc::SIGHUP => "Hangup",
        libc::SIGINT => "Interrupt",
        libc::SIGQUIT => "Quit",
        libc::SIGILL => "Illegal instruction",
        libc::SIGTRAP => "Trace/breakpoint trap",
        libc::SIGABRT => "Aborted",
        libc::SIGBUS => "Bus error",
        libc::SIGFPE => "Floating point exception",
        libc::SIGKILL => "Killed",
        libc::SIGUSR1 => "User defined signal 1",
        libc::SIGSEGV => "Segmentation fault",
        libc::SIGUSR2 => "User defined signal 2",
        libc::SIGPIPE => "Broken pipe",
        libc::SIGALRM => "Alarm clock",
        libc::SIGTERM => "Terminated",
        libc::SIGXCPU => "CPU time limit exceeded",
        libc::SIGXFSZ => "File size limit exceeded",
        _ => return format!("Signal {signal}"),
    };
    name.to_string()
}

#[cfg(test)]
mod tests;
