import Foundation
import Glibc
import Testing
import TestSupport

/// A child a test starts dies with the test process (TestSupport
/// `ChildReaper`), even when the test process is SIGKILLed.
@Suite struct ChildReaperTests {
    /// Starts `/bin/sh -c script` with `fd3` as its descriptor 3, its standard
    /// output to `output`, and `stdin` as its standard input.
    func spawnShell(_ script: String, stdin: Int32? = nil, fd3: Int32? = nil, output: String = "/dev/null") throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdin { posix_spawn_file_actions_adddup2(&actions, stdin, 0) }
        if let fd3 { posix_spawn_file_actions_adddup2(&actions, fd3, 3) }
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = (["/bin/sh", "-c", script] as [String]).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, "/bin/sh", &actions, nil, argv, environ)
        try #require(result == 0, "posix_spawn: \(String(cString: strerror(result)))")
        return pid
    }

    func alive(_ pid: pid_t) -> Bool { kill(pid, 0) == 0 && ChildReaper.startTime(of: pid) != nil && !isZombie(pid) }

    func isZombie(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return true }
        return stat[stat.index(after: close)...].split(separator: " ").first == "Z"
    }

    @Test func aChildOfAProcessThatIsKilledDiesWithinASecond() async throws {
        let directory = TemporaryDirectory()
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        // The sentinel, as ChildReaper starts it for the test process.
        let sentinel = try spawnShell(ChildReaper.sentinelScript, stdin: ends[0])
        // The "test process": it holds the only write end, starts a child
        // (a long sleep) and tells the sentinel about it, as
        // ChildReaper.watch does, then waits.
        let pidFile = directory.path + "/child.pid"
        let parent = try spawnShell("""
            sleep 60 3>&- & child=$!
            echo "$child $(sed 's/.*) //' /proc/$child/stat | cut -d' ' -f20)" >&3
            echo "$child"
            exec sleep 60
            """, fd3: ends[1], output: pidFile)
        close(ends[0])
        close(ends[1])
        defer {
            kill(parent, SIGKILL)
            var status: Int32 = 0
            waitpid(parent, &status, 0)
            waitpid(sentinel, &status, 0)
        }
        var child: pid_t = 0
        for _ in 0..<100 where child == 0 {
            child = pid_t((try? String(contentsOfFile: pidFile, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
            if child == 0 { try await Task.sleep(for: .milliseconds(20)) }
        }
        try #require(child > 0, "the parent did not start its child")
        defer { kill(child, SIGKILL) }
        // While the parent lives, the child is left alone.
        try await Task.sleep(for: .milliseconds(300))
        #expect(alive(child), "the child was killed while its parent lived")

        kill(parent, SIGKILL)
        let killed = ContinuousClock.now
        while alive(child), ContinuousClock.now - killed < .seconds(1) { try await Task.sleep(for: .milliseconds(10)) }
        #expect(!alive(child), "the child outlived its SIGKILLed parent by a second")
        // And the sentinel ends once it has done its work.
        var status: Int32 = 0
        var ended = false
        while !ended, ContinuousClock.now - killed < .seconds(2) {
            ended = waitpid(sentinel, &status, WNOHANG) == sentinel
            if !ended { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(ended, "the sentinel kept running")
    }

    /// This test process has its sentinel: alive, reading the pipe whose
    /// write end this process holds (the same pipe inode), and not yet
    /// told to kill (a spawned child is still running).
    @Test func thisTestProcessHasASentinelOnItsPipe() throws {
        let background = try BackgroundProcess("/bin/sleep", ["30"])
        let sentinel = ChildReaper.sentinelProcess
        try #require(sentinel.pid > 0 && sentinel.writer >= 0, "the sentinel did not start")
        #expect(alive(sentinel.pid))
        let theirs = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(sentinel.pid)/fd/0")
        let ours = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(sentinel.writer)")
        #expect(theirs.hasPrefix("pipe:") && theirs == ours, "sentinel reads \(theirs), we hold \(ours)")
        #expect(alive(background.process.processIdentifier))
        // It lives as long as this process: a descriptor it inherited (a
        // socket by which Foundation learns that a child exited) would
        // stay open as long, and the child would never be seen to end.
        let inherited = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(sentinel.pid)/fd")
            .compactMap { Int32($0) }.filter { $0 > 2 }
        #expect(inherited.isEmpty, "the sentinel holds descriptors beyond 0-2: \(inherited)")
    }
}
