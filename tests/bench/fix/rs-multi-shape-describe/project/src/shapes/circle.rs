use super::{Bounds, Shape};

#[derive(Debug, Clone, PartialEq)]
pub struct Circle {
    pub cx: f64,
    pub cy: f64,
    pub r: f64,
}

impl Shape for Circle {
    fn area(&self) -> f64 {
        std::f64::consts::PI * self.r * self.r
    }

    fn bounds(&self) -> Bounds {
        (self.cx - self.r, self.cy - self.r, self.cx + self.r, self.cy + self.r)
    }

    fn translate(&mut self, dx: f64, dy: f64) {
        self.cx += dx;
        self.cy += dy;
    }
}
