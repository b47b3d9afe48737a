use super::*;

#[test]
fn a_ten_megabyte_network_list_is_filtered_in_one_pass() {
    let mut text = String::from("## Network requests\nShowing 1-200000 of 200000 (Page 1 of 1).");
    for id in 0..200_000 {
        let (url, status) = match id % 4 {
            0 => (
                "http://example.test/assets/some/long/path/picture.png",
                "200",
            ),
            1 => ("http://example.test/api/v1/orders?page=1", "200"),
            2 => ("http://example.test/assets/fonts/regular.woff2", "404"),
            _ => ("http://example.test/assets/app/styles/main.css", "200"),
        };
        text.push_str(&format!("\nreqid={id} GET {url} [{status}]"));
    }
    assert!(text.len() > 10_000_000);
    let result = serde_json::json!({"content": [{"type": "text", "text": text}]}).to_string();
    let options = ResultOptions::for_level(Level::Moderate);
    let out = filter_tool_result("list_network_requests", &result, &options)
        .expect("ok")
        .expect("filtered");
    assert_eq!(out.figures.reqids_hidden, 100_000);
    assert!(out.text_bytes_out < out.text_bytes_in / 2 + 1_000_000);
}

#[test]
fn off_and_unknown_tools_change_nothing_and_bad_json_is_an_error() {
    let mut text = String::from("## Network requests");
    for id in 1..=6 {
        text.push_str(&format!(
            "\nreqid={id} GET http://a/images/photo-{id}.png [200]"
        ));
    }
    let result = serde_json::json!({"content": [{"type": "text", "text": text}]}).to_string();
    let result = result.as_str();
    let moderate = ResultOptions::for_level(Level::Moderate);
    assert!(
        filter_tool_result("list_network_requests", result, &moderate)
            .expect("ok")
            .is_some()
    );
    let off = ResultOptions::for_level(Level::Off);
    assert_eq!(
        filter_tool_result("list_network_requests", result, &off),
        Ok(None)
    );
    assert_eq!(
        filter_tool_result("browser_network_requests", result, &moderate),
        Ok(None)
    );
    assert!(filter_tool_result("list_network_requests", "{", &moderate).is_err());
}
