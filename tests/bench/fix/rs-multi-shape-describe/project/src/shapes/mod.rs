//! The shapes a canvas can hold.
mod circle;
mod rect;

pub use circle::Circle;
pub use rect::Rect;

/// Axis-aligned bounding box: (min_x, min_y, max_x, max_y).
pub type Bounds = (f64, f64, f64, f64);

pub trait Shape {
    fn area(&self) -> f64;
    fn bounds(&self) -> Bounds;
    fn translate(&mut self, dx: f64, dy: f64);
}
