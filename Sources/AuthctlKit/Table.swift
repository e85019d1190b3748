/// A plain text table: a header row, columns padded to their widest cell.
func table(_ header: [String], _ rows: [[String]]) -> String {
    let widths = header.indices.map { column in
        ([header] + rows).map { $0[column].count }.max() ?? 0
    }
    func line(_ cells: [String]) -> String {
        cells.enumerated().map { index, cell in
            index == cells.count - 1 ? cell : cell + String(repeating: " ", count: widths[index] - cell.count)
        }.joined(separator: "  ")
    }
    return ([line(header)] + rows.map(line)).joined(separator: "\n")
}

/// "Label: value" lines, the values lined up after the longest label.
func aligned(_ rows: [(label: String, value: String)]) -> String {
    let width = rows.map(\.label.count).max() ?? 0
    return rows.map { row in row.label + ":" + String(repeating: " ", count: width - row.label.count + 1) + row.value }
        .joined(separator: "\n")
}
