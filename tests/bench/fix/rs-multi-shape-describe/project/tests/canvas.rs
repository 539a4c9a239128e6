use canvas::canvas::Canvas;
use canvas::shapes::{Circle, Rect, Shape};

fn sample() -> Canvas {
    let mut c = Canvas::new();
    c.add(Rect { x: 0.0, y: 0.0, w: 3.0, h: 4.0 }).add(Circle { cx: 5.0, cy: 5.0, r: 2.0 });
    c
}

#[test]
fn area_and_bounds() {
    let c = sample();
    assert!((c.total_area() - (12.0 + std::f64::consts::PI * 4.0)).abs() < 1e-9);
    assert_eq!(c.bounds(), Some((0.0, 0.0, 7.0, 7.0)));
}

#[test]
fn descriptions() {
    assert_eq!(Circle { cx: 0.0, cy: 0.0, r: 2.0 }.describe(), "circle r=2");
    assert_eq!(Rect { x: 1.0, y: 1.0, w: 2.5, h: 4.0 }.describe(), "rect 2.5x4");
}

#[test]
fn inventory_lists_shapes_in_order() {
    let mut c = sample();
    c.shift_all(1.0, 1.0);
    assert_eq!(c.inventory(), ["rect 3x4", "circle r=2"]);
    assert!(Canvas::new().inventory().is_empty());
}
