//! A row-major dense matrix of f64 with the handful of operations the fitting code needs.
use std::fmt;
use std::ops::{Index, IndexMut};

#[derive(Debug, Clone, PartialEq)]
pub struct Matrix {
    rows: usize,
    cols: usize,
    data: Vec<f64>,
}

#[derive(Debug, PartialEq)]
pub enum MatrixError {
    DimensionMismatch { left: (usize, usize), right: (usize, usize) },
    Singular,
    NotSquare,
}

impl Matrix {
    pub fn zeros(rows: usize, cols: usize) -> Self {
        Matrix { rows, cols, data: vec![0.0; rows * cols] }
    }

    pub fn identity(n: usize) -> Self {
        let mut m = Matrix::zeros(n, n);
        for i in 0..n {
            m[(i, i)] = 1.0;
        }
        m
    }

    /// Builds a matrix from rows; every row must have the same length.
    pub fn from_rows(rows: &[Vec<f64>]) -> Self {
        let cols = rows.first().map_or(0, Vec::len);
        assert!(rows.iter().all(|r| r.len() == cols), "ragged rows");
        Matrix { rows: rows.len(), cols, data: rows.iter().flatten().copied().collect() }
    }

    pub fn shape(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    pub fn row(&self, r: usize) -> &[f64] {
        &self.data[r * self.cols..(r + 1) * self.cols]
    }

    pub fn transpose(&self) -> Matrix {
        let mut t = Matrix::zeros(self.rows, self.cols);
        for r in 0..self.rows {
            for c in 0..self.cols {
                t.data[c * self.rows + r] = self[(r, c)];
            }
        }
        t
    }

    pub fn mul(&self, other: &Matrix) -> Result<Matrix, MatrixError> {
        if self.cols != other.rows {
            return Err(MatrixError::DimensionMismatch { left: self.shape(), right: other.shape() });
        }
        let mut out = Matrix::zeros(self.rows, other.cols);
        for r in 0..self.rows {
            for c in 0..other.cols {
                out[(r, c)] = (0..self.cols).map(|k| self[(r, k)] * other[(k, c)]).sum();
            }
        }
        Ok(out)
    }

    pub fn add(&self, other: &Matrix) -> Result<Matrix, MatrixError> {
        if self.shape() != other.shape() {
            return Err(MatrixError::DimensionMismatch { left: self.shape(), right: other.shape() });
        }
        let data = self.data.iter().zip(&other.data).map(|(a, b)| a + b).collect();
        Ok(Matrix { rows: self.rows, cols: self.cols, data })
    }

    pub fn scale(&self, k: f64) -> Matrix {
        Matrix { rows: self.rows, cols: self.cols, data: self.data.iter().map(|x| x * k).collect() }
    }

    /// Solves `self * x = b` by Gaussian elimination with partial pivoting.
    pub fn solve(&self, b: &[f64]) -> Result<Vec<f64>, MatrixError> {
        if self.rows != self.cols {
            return Err(MatrixError::NotSquare);
        }
        if b.len() != self.rows {
            return Err(MatrixError::DimensionMismatch { left: self.shape(), right: (b.len(), 1) });
        }
        let n = self.rows;
        let mut a = self.clone();
        let mut x = b.to_vec();
        for col in 0..n {
            let pivot = (col..n)
                .max_by(|&i, &j| a[(i, col)].abs().total_cmp(&a[(j, col)].abs()))
                .unwrap();
            if a[(pivot, col)].abs() < 1e-12 {
                return Err(MatrixError::Singular);
            }
            if pivot != col {
                for k in 0..n {
                    let tmp = a[(col, k)];
                    a[(col, k)] = a[(pivot, k)];
                    a[(pivot, k)] = tmp;
                }
                x.swap(col, pivot);
            }
            for r in col + 1..n {
                let factor = a[(r, col)] / a[(col, col)];
                for k in col..n {
                    a[(r, k)] -= factor * a[(col, k)];
                }
                x[r] -= factor * x[col];
            }
        }
        for r in (0..n).rev() {
            let tail: f64 = (r + 1..n).map(|k| a[(r, k)] * x[k]).sum();
            x[r] = (x[r] - tail) / a[(r, r)];
        }
        Ok(x)
    }

    pub fn trace(&self) -> Result<f64, MatrixError> {
        if self.rows != self.cols {
            return Err(MatrixError::NotSquare);
        }
        Ok((0..self.rows).map(|i| self[(i, i)]).sum())
    }
}

impl Index<(usize, usize)> for Matrix {
    type Output = f64;

    fn index(&self, (r, c): (usize, usize)) -> &f64 {
        assert!(r < self.rows && c < self.cols, "index ({r}, {c}) outside {}x{}", self.rows, self.cols);
        &self.data[r * self.cols + c]
    }
}

impl IndexMut<(usize, usize)> for Matrix {
    fn index_mut(&mut self, (r, c): (usize, usize)) -> &mut f64 {
        assert!(r < self.rows && c < self.cols, "index ({r}, {c}) outside {}x{}", self.rows, self.cols);
        &mut self.data[r * self.cols + c]
    }
}

impl fmt::Display for Matrix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for r in 0..self.rows {
            let cells: Vec<String> = self.row(r).iter().map(|x| format!("{x:8.3}")).collect();
            writeln!(f, "[{}]", cells.join(" "))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_times_matrix() {
        let m = Matrix::from_rows(&[vec![1.0, 2.0], vec![3.0, 4.0]]);
        assert_eq!(Matrix::identity(2).mul(&m).unwrap(), m);
    }

    #[test]
    fn solve_two_by_two() {
        let a = Matrix::from_rows(&[vec![2.0, 1.0], vec![1.0, 3.0]]);
        let x = a.solve(&[3.0, 5.0]).unwrap();
        assert!((x[0] - 0.8).abs() < 1e-9 && (x[1] - 1.4).abs() < 1e-9);
    }

    #[test]
    fn square_transpose() {
        let m = Matrix::from_rows(&[vec![1.0, 2.0], vec![3.0, 4.0]]);
        assert_eq!(m.transpose(), Matrix::from_rows(&[vec![1.0, 3.0], vec![2.0, 4.0]]));
    }
}
