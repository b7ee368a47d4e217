//! A small column-aligning table printer: text columns flush left, number columns flush
//! right, two spaces between columns, widths in characters (not bytes).

/// How a column's cells line up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Align {
    /// Flush left (names, dtypes, shapes).
    Left,
    /// Flush right (numbers).
    Right,
}

/// A table: a header row, then rows of cells.
#[derive(Debug, Clone)]
pub(crate) struct Table {
    headers: Vec<String>,
    aligns: Vec<Align>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these columns.
    pub(crate) fn new(columns: &[(&str, Align)]) -> Self {
        Self {
            headers: columns.iter().map(|(h, _)| h.to_string()).collect(),
            aligns: columns.iter().map(|(_, a)| *a).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row; missing cells are blank, extra cells are dropped.
    pub(crate) fn row(&mut self, cells: Vec<String>) {
        let mut cells = cells;
        cells.resize(self.headers.len(), String::new());
        self.rows.push(cells);
    }

    /// The number of rows (not counting the header).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }

    /// The table as text, each line starting with `indent` and ending with a newline; no
    /// trailing spaces.
    pub(crate) fn render(&self, indent: &str) -> String {
        let width = |s: &str| s.chars().count();
        let mut widths: Vec<usize> = self.headers.iter().map(|h| width(h)).collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(width(cell));
            }
        }
        let mut out = String::new();
        for row in std::iter::once(&self.headers).chain(&self.rows) {
            let mut line = String::from(indent);
            for (i, cell) in row.iter().enumerate() {
                if i > 0 {
                    line.push_str("  ");
                }
                let pad = " ".repeat(widths[i] - width(cell));
                match self.aligns[i] {
                    Align::Left => {
                        line.push_str(cell);
                        line.push_str(&pad);
                    }
                    Align::Right => {
                        line.push_str(&pad);
                        line.push_str(cell);
                    }
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_line_up() {
        let mut t = Table::new(&[("name", Align::Left), ("bytes", Align::Right)]);
        t.row(vec!["weights".into(), "12".into()]);
        t.row(vec!["b".into(), "123456".into()]);
        assert_eq!(t.len(), 2);
        assert_eq!(
            t.render("  "),
            "  name      bytes\n  weights      12\n  b        123456\n"
        );
    }

    #[test]
    fn widths_count_characters_and_short_rows_are_padded() {
        let mut t = Table::new(&[("a", Align::Left), ("b", Align::Left)]);
        t.row(vec!["µµ".into()]);
        assert_eq!(t.render(""), "a   b\nµµ\n");
    }
}
