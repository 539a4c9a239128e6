from weather.station import Station, merge_stations

METRIC_DAY = [
    {"time": "2024-06-01T06:00", "temperature": 11.0, "wind": 8, "rain": 0.4},
    {"time": "2024-06-01T14:00", "temperature": 21.0, "wind": 20, "rain": 0.0},
    {"time": "2024-06-01T22:00", "temperature": 14.0, "wind": 5, "rain": 1.1},
]


def test_metric_station_summary():
    st = Station("garden")
    assert st.ingest_many(METRIC_DAY) == 3
    day = st.summarise_day("2024-06-01")
    assert (day.temp_min, day.temp_max, day.temp_mean) == (11.0, 21.0, 15.3)
    assert day.rain_total == 1.5


def test_imperial_station_is_converted():
    st = Station("porch", units={"temperature": "F", "wind": "mph", "rain": "in"})
    st.ingest_many([
        {"time": "2024-06-01T06:00", "temperature": 50.0, "wind": 10, "rain": 0.1},
        {"time": "2024-06-01T14:00", "temperature": 68.0, "wind": 5},
    ])
    assert st.rejected == []
    day = st.summarise_day("2024-06-01")
    assert round(day.temp_min, 1) == 10.0
    assert round(day.temp_max, 1) == 20.0
    assert round(day.wind_max) == 16


def test_frost_in_fahrenheit():
    st = Station("field", units={"temperature": "F"})
    st.ingest({"time": "2024-01-10T05:00", "temperature": 28.4})
    st.ingest({"time": "2024-01-10T13:00", "temperature": 41.0})
    assert [t.hour for t in st.frost_hours()] == [5]


def test_glitch_is_rejected():
    st = Station("roof")
    assert not st.ingest({"time": "2024-06-01T00:00", "temperature": 99.0})
    assert "out of range" in st.rejected[0][1]


def test_merge_keeps_all_readings():
    a, b = Station("a"), Station("b")
    a.ingest_many(METRIC_DAY[:1])
    b.ingest_many(METRIC_DAY[1:])
    assert len(merge_stations("ab", [a, b]).readings) == 3
