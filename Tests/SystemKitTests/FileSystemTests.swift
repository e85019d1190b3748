import Glibc
import SystemKit
import Testing

@Suite struct FileSystemTests {
    private func temporaryDirectory() -> String {
        var template = Array("/tmp/authkeyd-fs-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    @Test func makeDirectoryCreatesParentsAndToleratesAnExistingOne() throws {
        let root = temporaryDirectory()
        let nested = "\(root)/a/b/c"
        try FileSystem.makeDirectory(nested, mode: 0o700, intermediates: true)
        #expect(FileSystem.exists(nested))
        try FileSystem.makeDirectory(nested, mode: 0o700)
        #expect(throws: SystemError.self, "a missing parent without intermediates is an error") {
            try FileSystem.makeDirectory("\(root)/x/y", mode: 0o700)
        }
    }

    @Test func removeFileToleratesAMissingFileButReportsOtherFailures() throws {
        let root = temporaryDirectory()
        let file = "\(root)/f"
        try AtomicFile.write([1, 2, 3], to: file)
        try FileSystem.removeFile(file)
        #expect(!FileSystem.exists(file))
        try FileSystem.removeFile(file)
        #expect(throws: SystemError.self, "unlink of a directory fails with EISDIR") {
            try FileSystem.removeFile(root)
        }
    }

    @Test func setModeChangesThePermissionBitsAndReportsAMissingFile() throws {
        let root = temporaryDirectory()
        let file = "\(root)/f"
        try AtomicFile.write([1], to: file, permissions: 0o600)
        try FileSystem.setMode(file, 0o640)
        var status = stat()
        #expect(stat(file, &status) == 0)
        #expect(status.st_mode & 0o777 == 0o640)
        let error = #expect(throws: SystemError.self) { try FileSystem.setMode("\(root)/missing", 0o600) }
        #expect(error?.code == ENOENT)
    }

    @Test func theCreationMaskAppliesInsideTheBodyAndIsRestoredAfter() throws {
        let root = temporaryDirectory()
        let before = umask(0o022)
        umask(before)
        try FileSystem.withCreationMask(0o077) { () throws(SystemError) in
            try FileSystem.makeDirectory("\(root)/masked", mode: 0o777)
        }
        var status = stat()
        #expect(stat("\(root)/masked", &status) == 0)
        #expect(status.st_mode & 0o777 == 0o700)
        let after = umask(before)
        #expect(after == before)
    }

    @Test func parentOfAPath() {
        #expect(FileSystem.parent(of: "/run/authkeyd/sock") == "/run/authkeyd")
        #expect(FileSystem.parent(of: "/sock") == "/")
        #expect(FileSystem.parent(of: "sock") == "")
        #expect(FileSystem.directory(containing: "sock") == ".")
        #expect(FileSystem.directory(containing: "/sock") == "/")
        #expect(FileSystem.directory(containing: "/run/authkeyd/sock") == "/run/authkeyd")
    }
}

@Suite struct FileSystemRenameTests {
    @Test func renameMovesAFileAndReportsAMissingOne() throws {
        var template = Array("/tmp/authkeyd-rename-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        let root = String(cString: try #require(made))
        try AtomicFile.write([1], to: "\(root)/a")
        try FileSystem.rename("\(root)/a", to: "\(root)/b")
        #expect(!FileSystem.exists("\(root)/a"))
        #expect(FileSystem.isRegularFile("\(root)/b"))
        #expect(!FileSystem.isRegularFile(root), "a directory is not a regular file")
        #expect(!FileSystem.isRegularFile("\(root)/a"), "nor is nothing")
        #expect(throws: SystemError("rename(\(root)/a)", code: ENOENT)) { try FileSystem.rename("\(root)/a", to: "\(root)/c") }
    }
}
