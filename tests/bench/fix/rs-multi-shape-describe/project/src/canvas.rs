//! A canvas holds shapes in drawing order.
use crate::shapes::{Bounds, Shape};

#[derive(Default)]
pub struct Canvas {
    shapes: Vec<Box<dyn Shape>>,
}

impl Canvas {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(&mut self, shape: impl Shape + 'static) -> &mut Self {
        self.shapes.push(Box::new(shape));
        self
    }

    pub fn total_area(&self) -> f64 {
        self.shapes.iter().map(|s| s.area()).sum()
    }

    /// The box around every shape, or None for an empty canvas.
    pub fn bounds(&self) -> Option<Bounds> {
        self.shapes.iter().map(|s| s.bounds()).reduce(|a, b| {
            (a.0.min(b.0), a.1.min(b.1), a.2.max(b.2), a.3.max(b.3))
        })
    }

    pub fn shift_all(&mut self, dx: f64, dy: f64) {
        self.shapes.iter_mut().for_each(|s| s.translate(dx, dy));
    }

    /// What is on the canvas, for the sidebar.
    pub fn inventory(&self) -> Vec<String> {
        vec![format!("{} shapes", self.shapes.len())]
    }
}
