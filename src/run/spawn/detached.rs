//! Starting a program on its own, detached from whoever started it: a new session (no
//! controlling terminal, so a closed terminal or a Ctrl-C of the starter never reaches it),
//! standard input from `/dev/null`, standard output and error appended to a log file, no other
//! inherited file descriptor. For `herd mcp`'s `run_agent`, which starts a background herd that
//! outlives the MCP client. A child of `spawn`, whose `unsafe` allowance covers the libc calls.

use std::ffi::{CString, OsStr};
use std::io;
use std::path::Path;

use super::{c_string, check};

/// What to start detached: `program` (a path), its argv (`argv[0]` included), its folder and the
/// log its output is appended to (made 0600 when missing). The environment is this process's.
#[derive(Debug)]
pub struct DetachedRequest<'a> {
    pub program: &'a Path,
    pub argv: &'a [String],
    pub cwd: &'a Path,
    pub log: &'a Path,
}

/// The spawn attributes and file actions of a detached start, destroyed when dropped.
struct DetachedSetup {
    attr: libc::posix_spawnattr_t,
    actions: libc::posix_spawn_file_actions_t,
}

impl DetachedSetup {
    fn new(log: &CString, cwd: &CString) -> io::Result<Box<DetachedSetup>> {
        // SAFETY: plain C data that the init calls fill in before any other use; zeroed memory
        // is a valid bit pattern for it. Boxed so the addresses stay put.
        let mut setup: Box<DetachedSetup> = Box::new(unsafe { std::mem::zeroed() });
        // SAFETY: `attr` is valid for writes and not yet initialised.
        check(unsafe { libc::posix_spawnattr_init(&mut setup.attr) })?;
        // SAFETY: as above; on failure the attr is destroyed and the box forgotten, so `Drop`
        // never sees an uninitialised actions struct.
        if let Err(error) =
            check(unsafe { libc::posix_spawn_file_actions_init(&mut setup.actions) })
        {
            // SAFETY: `attr` was initialised just above.
            unsafe { libc::posix_spawnattr_destroy(&mut setup.attr) };
            std::mem::forget(setup);
            return Err(error);
        }
        setup.configure(log, cwd)?;
        Ok(setup)
    }

    fn configure(&mut self, log: &CString, cwd: &CString) -> io::Result<()> {
        const DEV_NULL: &std::ffi::CStr = c"/dev/null";
        // SAFETY (every call): `attr` and `actions` were initialised by `new`; the sigsets are
        // initialised by sigemptyset/sigfillset before use; the C strings outlive the calls
        // (glibc copies the paths into the actions).
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
            check(libc::posix_spawn_file_actions_addopen(
                &mut self.actions,
                0,
                DEV_NULL.as_ptr(),
                libc::O_RDONLY,
                0,
            ))?;
            check(libc::posix_spawn_file_actions_addopen(
                &mut self.actions,
                1,
                log.as_ptr(),
                libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT | libc::O_NOFOLLOW,
                0o600,
            ))?;
            check(libc::posix_spawn_file_actions_adddup2(
                &mut self.actions,
                1,
                2,
            ))?;
            check(super::posix_spawn_file_actions_addchdir_np(
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

impl Drop for DetachedSetup {
    fn drop(&mut self) {
        // SAFETY: both were initialised in `new` and are destroyed once.
        unsafe {
            libc::posix_spawn_file_actions_destroy(&mut self.actions);
            libc::posix_spawnattr_destroy(&mut self.attr);
        }
    }
}

/// Starts `request` detached; the child's pid (also its session and process group id). The
/// caller reaps it (`wait_for_exit` on a thread) or leaves that to init when it ends first.
pub fn spawn_detached(request: &DetachedRequest<'_>) -> io::Result<u32> {
    let program = c_string(request.program.as_os_str(), "program path")?;
    let log = c_string(request.log.as_os_str(), "log path")?;
    let cwd = c_string(request.cwd.as_os_str(), "folder")?;
    let args = request
        .argv
        .iter()
        .map(|arg| c_string(OsStr::new(arg), "command"))
        .collect::<io::Result<Vec<CString>>>()?;
    let env = std::env::vars_os()
        .map(|(key, value)| {
            let mut entry = key;
            entry.push("=");
            entry.push(value);
            c_string(&entry, "environment")
        })
        .collect::<io::Result<Vec<CString>>>()?;
    let mut arg_ptrs: Vec<*mut libc::c_char> = args.iter().map(|a| a.as_ptr().cast_mut()).collect();
    arg_ptrs.push(std::ptr::null_mut());
    let mut env_ptrs: Vec<*mut libc::c_char> = env.iter().map(|e| e.as_ptr().cast_mut()).collect();
    env_ptrs.push(std::ptr::null_mut());
    let setup = DetachedSetup::new(&log, &cwd)?;
    let mut pid: libc::pid_t = 0;
    // SAFETY: every pointer is valid for the call: the strings live until the end of this
    // function, both arrays end with a null pointer, `setup` holds initialised attributes and
    // actions. posix_spawn keeps none of them.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_detached_child_has_its_own_session_and_writes_to_the_log() {
        let dir = tempfile::tempdir().expect("temp dir");
        let log = dir.path().join("out.log");
        std::fs::write(&log, "before\n").expect("seed the log");
        let argv: Vec<String> = ["sh", "-c", "echo out; echo err >&2; cat; ps -o sid= -p $$"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let pid = spawn_detached(&DetachedRequest {
            program: Path::new("/bin/sh"),
            argv: &argv,
            cwd: dir.path(),
            log: &log,
        })
        .expect("spawned");
        let status = super::super::wait_for_exit(pid);
        assert_eq!(status.code, Some(0), "{status:?}");
        let text = std::fs::read_to_string(&log).expect("log");
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        // Appended; stdin is /dev/null (cat ends at once); its session is its own pid.
        assert_eq!(lines, ["before", "out", "err", &pid.to_string()], "{text}");
    }
}
