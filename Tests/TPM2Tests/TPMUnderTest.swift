import TestSupport
import TPM2

/// A suite's own software TPM, and a connection to it.
struct TPMUnderTest {
    let softwareTPM: SoftwareTPM
    let tpm: TPM

    init() throws {
        softwareTPM = try SoftwareTPM()
        tpm = try TPM(tcti: softwareTPM.tcti)
    }
}
